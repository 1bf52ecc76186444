// An encrypted file's page (/e/{id}): downloads its age file from /f/{id} and decrypts it here with
// the key the link's fragment holds (or the passphrase asked for), chunk by chunk as it arrives; a
// cut download goes on from the byte it reached. The name and type come from the fragment too and
// are only ever shown as text. A video or audio file also plays in the page without being
// downloaded whole: a service worker (static/stream-worker.js) answers the player's ranges from
// the few chunks they need, so it seeks at once in a file of any size.

import { headerLength, newKeyedOpener, readFragment } from './age-stream.js';
import { decrypt, refusal } from './age-download.js';

/** Pictures, audio and video up to this size are shown in the page too. */
const PREVIEW_LIMIT = 256 * 1024 * 1024;
/** The most the page fetches to find an age header (its `--- MAC` line) and the payload's nonce. */
const HEAD_BYTES = 65536 + 16;
/** What the page's counted download gives back, for the ranges that go on with it (services::downloads). */
const GRANT_HEADER = 'Blobdrop-Download-Grant';

/**
 * Opens the age header of the file at `url` (`size` bytes) with one ranged request: the keyed
 * opener (`newKeyedOpener`), the file's ETag, and the grant that lets the player's ranges go on
 * with this download without counting again.
 */
async function openHead(url, size, secret) {
  const last = Math.min(size, HEAD_BYTES) - 1;
  const response = await fetch(url, { headers: { Range: `bytes=0-${last}` }, credentials: 'same-origin', cache: 'no-store' });
  if (response.status !== 206 && response.status !== 200) throw new Error(await refusal(response));
  const head = new Uint8Array(await response.arrayBuffer()).subarray(0, last + 1);
  if (headerLength(head) < 0) throw new Error('the file ends inside its age header');
  const keyed = await newKeyedOpener(head, size, secret);
  return { ...keyed, etag: response.headers.get('ETag'), grant: response.headers.get(GRANT_HEADER) };
}

/**
 * Plays the file in the page from `/e/{id}/stream`, which the service worker answers; it asks this
 * page for the payload key, handed over by postMessage on a port of its own.
 */
async function play(container, status, root, secret, name, type) {
  const id = root.dataset.id;
  const size = Number(root.dataset.size);
  const opened = await openHead(`/f/${encodeURIComponent(id)}`, size, secret);
  const worker = navigator.serviceWorker;
  worker.addEventListener('message', (event) => {
    const { data } = event;
    if (data?.type === 'stream-key' && data.id === id && event.ports[0]) {
      const { opener, key, etag, grant } = opened;
      event.ports[0].postMessage({ id, key, payloadStart: opener.payloadStart, fileSize: size, type, etag, grant });
    } else if (data?.type === 'stream-error') {
      status.textContent = `Not played: ${data.message}`;
    }
  });
  worker.startMessages();
  // Scoped to this page's path; the worker's script lives with the other static files and its
  // answer allows the scope (Service-Worker-Allowed).
  const script = new URL('../stream-worker.js', import.meta.url);
  await worker.register(script, { type: 'module', scope: window.location.pathname });
  if (!worker.controller) {
    await new Promise((resolve, reject) => {
      worker.addEventListener('controllerchange', resolve, { once: true });
      setTimeout(() => reject(new Error('the player could not start (no service worker)')), 10_000);
    });
  }
  const kind = type.split('/')[0];
  const player = document.createElement(kind);
  player.controls = true;
  player.className = 'preview';
  player.id = 'encrypted-player';
  player.setAttribute('aria-label', name);
  player.addEventListener('error', () => {
    if (!status.textContent.startsWith('Not played')) status.textContent = 'Not played: the player could not read this file';
  });
  player.src = `/e/${encodeURIComponent(id)}/stream`;
  container.replaceChildren(player);
  status.textContent = 'Playing from the encrypted file: only the parts played are fetched.';
}

/** Offers the decrypted file to save (and saves it once), and shows it if it is a picture or media. */
function offer(container, plaintext, name, type) {
  const url = URL.createObjectURL(plaintext);
  const save = document.createElement('a');
  save.href = url;
  save.download = name;
  save.textContent = `Save ${name} again`;
  save.id = 'decrypted-save';
  container.replaceChildren(save);
  const kind = type.split('/')[0];
  if (plaintext.size <= PREVIEW_LIMIT && ['image', 'audio', 'video'].includes(kind)) {
    const preview = document.createElement(kind === 'image' ? 'img' : kind);
    preview.src = url;
    preview.className = 'preview';
    if (kind === 'image') preview.alt = name;
    else preview.controls = true;
    container.append(preview);
  }
  save.click();
}

export function initOpenEncrypted() {
  const root = document.getElementById('encrypted');
  const form = document.getElementById('decrypt-form');
  if (!root || !form) return;
  const button = document.getElementById('decrypt');
  const status = document.getElementById('decrypt-status');
  const bar = document.getElementById('decrypt-progress');
  const passphrase = document.getElementById('passphrase');
  const fragment = readFragment(window.location.hash);
  const { identity } = fragment;
  const name = fragment.name || 'decrypted';
  const type = fragment.type || 'application/octet-stream';
  if (fragment.name) document.getElementById('encrypted-name').textContent = fragment.name;
  if (!identity) {
    // No key in the link: a file encrypted with a passphrase (age -p), or a link cut short.
    document.getElementById('passphrase-field').hidden = false;
    passphrase.required = true;
  }
  const size = Number(root.dataset.size);
  const secretNow = () => (identity ? { identity } : { passphrase: passphrase.value });
  const playButton = document.getElementById('play');
  // Service workers need a secure origin (https, or this machine); elsewhere media plays after a
  // whole decrypted download, as any file does.
  if (playButton && /^(audio|video)\//.test(type) && 'serviceWorker' in navigator) {
    playButton.hidden = false;
    playButton.addEventListener('click', async () => {
      if (!identity && !form.reportValidity()) return;
      playButton.disabled = true;
      status.textContent = 'Opening…';
      try {
        await play(document.getElementById('decrypted'), status, root, secretNow(), name, type);
      } catch (error) {
        status.textContent = `Not played: ${error?.message ?? error}`;
        playButton.disabled = false;
      }
    });
  }
  button.disabled = false;
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const secret = secretNow();
    button.disabled = true;
    bar.hidden = false;
    status.textContent = 'Downloading and decrypting…';
    try {
      const progress = (bytes) => {
        bar.value = bytes;
      };
      const plaintext = await decrypt(`/f/${encodeURIComponent(root.dataset.id)}`, size, secret, type, progress);
      status.textContent = 'Decrypted.';
      offer(document.getElementById('decrypted'), plaintext, name, type);
    } catch (error) {
      status.textContent = `Not decrypted: ${error?.message ?? error}`;
    } finally {
      button.disabled = false;
    }
  });
}
