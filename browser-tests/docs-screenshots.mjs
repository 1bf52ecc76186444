// The screenshots in docs/images/, taken by `scripts/screenshots` with the real binary and headless
// Chromium: the upload page, the files list and grid, a share of photos and the system page, each
// at 1280 and 390 px in light and dark, over the same small set of files every time. Not a test
// (the specs check the pages); run it again when a page changes and commit what it writes.
//
// Usage: node docs-screenshots.mjs OUT_DIR   (BLOBDROP_BIN and CHROMIUM_PATH as for the specs)

import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { launchBrowser, signIn, startServer, uploadWithApi } from './helpers.mjs';

const OUT = path.resolve(process.argv[2] ?? '../docs/images');
const SIZES = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
];
const SCHEMES = ['light', 'dark'];

/** A photo-like PNG drawn by the page's canvas: a sky, a sun and hills in the given colours. */
async function drawnPhoto(page, [sky, ground, sun]) {
  const base64 = await page.evaluate(
    ([skyColour, groundColour, sunColour]) => {
      const canvas = document.createElement('canvas');
      canvas.width = 1200;
      canvas.height = 800;
      const g = canvas.getContext('2d');
      const gradient = g.createLinearGradient(0, 0, 0, 800);
      gradient.addColorStop(0, skyColour);
      gradient.addColorStop(1, '#ffffff');
      g.fillStyle = gradient;
      g.fillRect(0, 0, 1200, 800);
      g.fillStyle = sunColour;
      g.beginPath();
      g.arc(850, 250, 110, 0, Math.PI * 2);
      g.fill();
      g.fillStyle = groundColour;
      g.beginPath();
      g.moveTo(0, 800);
      g.bezierCurveTo(300, 420, 700, 640, 1200, 480);
      g.lineTo(1200, 800);
      g.fill();
      return canvas.toDataURL('image/png').split(',')[1];
    },
    [sky, ground, sun],
  );
  return Buffer.from(base64, 'base64');
}

async function shoot(page, name) {
  for (const size of SIZES) {
    await page.setViewportSize(size);
    for (const colorScheme of SCHEMES) {
      await page.emulateMedia({ colorScheme });
      await page.evaluate(() => document.fonts.ready);
      await page.waitForFunction(() => [...document.images].every((img) => img.complete));
      const file = path.join(OUT, `${name}-${size.width}-${colorScheme}.png`);
      await page.screenshot({ path: file, animations: 'disabled' });
      console.log(file);
    }
  }
  await page.setViewportSize(SIZES[0]);
  await page.emulateMedia({ colorScheme: 'light' });
}

async function main() {
  await mkdir(OUT, { recursive: true });
  const server = await startServer();
  const browser = await launchBrowser();
  try {
    const context = await browser.newContext({ baseURL: server.url, viewport: SIZES[0] });
    const page = await context.newPage();
    await signIn(page, server);

    const photos = [];
    const palettes = [
      ['#f59f00', '#5c940d', '#fff3bf'],
      ['#1c7ed6', '#2b8a3e', '#ffe066'],
      ['#e8590c', '#364fc7', '#ffd8a8'],
      ['#7048e8', '#0b7285', '#fcc2d7'],
    ];
    const names = ['beach-sunrise.png', 'lake-district.png', 'harbour-evening.png', 'northern-lights.png'];
    for (const [index, name] of names.entries()) {
      photos.push(await uploadWithApi(server, name, await drawnPhoto(page, palettes[index]), { 'Max-Days': '30' }));
    }
    await uploadWithApi(server, 'meeting-notes-2026-12-01.txt', 'Agenda\n1. Budget\n2. Hiring\n'.repeat(20), { 'Max-Days': '7' });
    await uploadWithApi(server, 'quarterly-report.pdf', Buffer.alloc(350_000, 37));
    await uploadWithApi(server, 'site-backup.tar.gz', Buffer.alloc(6_291_456, 7), { 'Max-Downloads': '1' });
    const created = await fetch(`${server.url}/api/shares`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${server.secret}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Holiday photos', note: 'The best of the summer, for the family.', files: photos.map((photo) => photo.id) }),
    });
    if (created.status !== 201) throw new Error(`creating the share: ${created.status} ${await created.text()}`);
    const share = await created.json();
    for (const photo of photos.slice(0, 2)) await (await fetch(photo.url)).arrayBuffer();

    // The upload page with one upload done through it, as a person leaves it.
    await page.goto('/');
    const photo = await drawnPhoto(page, ['#0ca678', '#495057', '#ffec99']);
    await page.evaluate(async (base64) => {
      const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
      const data = new DataTransfer();
      data.items.add(new File([bytes], 'garden.png', { type: 'image/png' }));
      document.querySelector('main').dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
    }, photo.toString('base64'));
    await page.waitForFunction(() => [...document.querySelectorAll('#uploads li.upload')].some((row) => row.dataset.state === 'done'));
    await page.waitForFunction(() => [...document.querySelectorAll('img.upload-qr')].every((img) => img.complete && img.naturalWidth > 0));
    await shoot(page, 'upload');

    await page.goto('/files');
    await shoot(page, 'files');
    await page.goto('/files?view=grid');
    await shoot(page, 'files-grid');
    await page.goto('/system');
    await shoot(page, 'system');

    const stranger = await (await browser.newContext({ baseURL: server.url, viewport: SIZES[0] })).newPage();
    await stranger.goto(share.url);
    await shoot(stranger, 'share');
  } finally {
    await browser.close().catch(() => {});
    await server.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
