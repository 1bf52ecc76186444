// An encrypted share (issue 29): the upload page encrypts a batch with one age identity, each
// file under the placeholder name `encrypted-N.age`, plus `encrypted-names.age`, an age file of
// JSON with each file's real name, type and folder. Its page (/s/{id}#AGE-SECRET-KEY-1…) reads
// that file with the key in the link's fragment and shows the names (as text only), decrypts a
// file when its Download is clicked, and makes a zip of them all, decrypted, file by file. The
// server's own zip and tar stay: they hold the ciphertext, which `age -d` opens.

import { readFragment } from './age-stream.js';
import { decrypt } from './age-download.js';
import { ZipWriter, blobSink, fileSink } from './zip-stream.js';

/** What the names file says it is; a page meeting another format refuses it. */
const NAMES_FORMAT = 'blobdrop-encrypted-share/1';
/** The names file's placeholder, and the N-th file's (1-based). */
export const NAMES_FILE = 'encrypted-names.age';
export const placeholderName = (position) => `encrypted-${position}.age`;
/** Pictures, audio and video up to this size are shown once decrypted. */
const PREVIEW_LIMIT = 256 * 1024 * 1024;

/**
 * The names file of an encrypted share titled `title`, its `files` being
 * `[{ file: placeholder, name, type, folder, modified }]`: the plaintext the upload page encrypts.
 */
export function namesFile(title, files) {
  const json = JSON.stringify({ format: NAMES_FORMAT, title, files });
  return new File([json], 'Names of the files (encrypted)', { type: 'application/json' });
}

/** A folder from the names file as zip paths may hold it: no `..`, `.`, empty or `\` parts. */
function cleanFolder(folder) {
  return folder
    .split(/[\\/]/)
    .filter((part) => part && part !== '.' && part !== '..')
    .join('/');
}

function cleanName(name) {
  const clean = name.replace(/[\\/\0]/g, '_');
  return clean === '' || clean === '.' || clean === '..' ? 'unnamed' : clean;
}

/** The names file's JSON, read strictly: strings where strings belong, nothing else trusted. */
function readNames(text) {
  let data;
  try {
    data = JSON.parse(text);
  } catch {
    throw new Error('the file of names is not JSON');
  }
  if (data?.format !== NAMES_FORMAT || !Array.isArray(data.files)) throw new Error('the file of names is not one this page reads');
  const string = (value) => (typeof value === 'string' ? value : '');
  const files = new Map();
  for (const file of data.files) {
    files.set(string(file?.file), {
      name: cleanName(string(file?.name)),
      type: string(file?.type) || 'application/octet-stream',
      folder: cleanFolder(string(file?.folder)),
      modified: Number.isFinite(file?.modified) ? new Date(file.modified) : new Date(),
    });
  }
  return { title: string(data.title), files };
}

/** The placeholder name in a member link `/s/{id}/f/{key}/{name}`. */
function linkName(href) {
  const last = new URL(href, window.location.href).pathname.split('/').pop() ?? '';
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

/** Saves `blob` as `name` through a link the page clicks. */
function save(blob, name) {
  const link = document.createElement('a');
  link.href = URL.createObjectURL(blob);
  link.download = name;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
}

/** The picture, audio or video of `blob` in the row's preview cell. */
function showPreview(cell, blob, { name, type }) {
  const kind = type.split('/')[0];
  if (!cell || blob.size > PREVIEW_LIMIT || !['image', 'audio', 'video'].includes(kind)) return;
  const preview = document.createElement(kind === 'image' ? 'img' : kind);
  preview.src = URL.createObjectURL(blob);
  preview.className = 'preview';
  if (kind === 'image') preview.alt = name;
  else preview.controls = true;
  cell.replaceChildren(preview);
}

export function initEncryptedShare() {
  const root = document.getElementById('encrypted-share');
  if (!root) return;
  const status = document.getElementById('share-decrypt-status');
  const bar = document.getElementById('share-decrypt-progress');
  const all = document.getElementById('download-decrypted');
  const form = document.getElementById('share-key-form');
  const passphrase = document.getElementById('share-passphrase');
  const { identity } = readFragment(window.location.hash);
  let secret = identity ? { identity } : null;
  /** The rows once their names are read: `{ url, size, name, type, folder, modified, row }`. */
  let members = [];
  let title = '';
  let busy = false;

  const fail = (error) => {
    status.textContent = `Not decrypted: ${error?.message ?? error}`;
  };
  /** Runs `work` with the progress bar over `total` bytes; one at a time. */
  async function task(total, saying, work) {
    if (busy) return;
    busy = true;
    all.disabled = true;
    bar.max = Math.max(1, total);
    bar.value = 0;
    bar.hidden = false;
    status.textContent = saying;
    try {
      await work((bytes) => {
        bar.value = bytes;
      });
    } catch (error) {
      fail(error);
    } finally {
      busy = false;
      all.disabled = members.length === 0;
    }
  }

  async function open() {
    const names = readNames(await (await decrypt(root.dataset.namesUrl, Number(root.dataset.namesSize), secret, 'application/json', () => {})).text());
    title = names.title;
    if (title) document.getElementById('share-name').textContent = title;
    members = [];
    for (const row of document.querySelectorAll('#share-files tbody tr[data-encrypted]')) {
      const link = row.querySelector('td.link a');
      const placeholder = link ? linkName(link.href) : '';
      if (placeholder === NAMES_FILE) {
        row.hidden = true;
        continue;
      }
      const named = names.files.get(placeholder);
      if (!link || !named) continue;
      const member = { url: link.href, size: Number(row.dataset.size), row, ...named };
      members.push(member);
      const nameCell = row.querySelector('td.name');
      nameCell.replaceChildren();
      if (member.folder) {
        const folder = document.createElement('span');
        folder.className = 'folder';
        folder.textContent = `${member.folder}/`;
        nameCell.append(folder);
      }
      nameCell.append(document.createTextNode(member.name));
      row.querySelector('td.type').textContent = member.type;
      const button = document.createElement('button');
      button.type = 'button';
      button.className = 'secondary decrypt-one';
      button.textContent = 'Download';
      button.setAttribute('aria-label', `Download ${member.name}`);
      button.addEventListener('click', () =>
        task(member.size, `Downloading and decrypting ${member.name}…`, async (progress) => {
          const plain = await decrypt(member.url, member.size, secret, member.type, progress);
          status.textContent = `Decrypted ${member.name}.`;
          showPreview(row.querySelector('td.preview'), plain, member);
          save(plain, member.name);
        }),
      );
      link.replaceWith(button);
    }
    all.disabled = members.length === 0;
    const count = `${members.length} file${members.length === 1 ? '' : 's'}`;
    // The server counts the names file too, and the size is the ciphertext's.
    document.getElementById('share-count').textContent = `${count} (encrypted)`;
    status.textContent = `${count}, decrypted in this page when you download them.`;
  }

  async function openWith(given) {
    secret = given;
    status.textContent = 'Opening the names…';
    try {
      await open();
      form.hidden = true;
    } catch (error) {
      fail(error);
    }
  }

  all.addEventListener('click', () => {
    const total = members.reduce((sum, member) => sum + member.size, 0);
    task(total, 'Downloading and decrypting every file…', async (progress) => {
      const zipName = `${cleanName(title || document.getElementById('share-name').textContent.trim() || 'decrypted')}.zip`;
      let sink;
      if (typeof window.showSaveFilePicker === 'function') {
        let handle;
        try {
          handle = await window.showSaveFilePicker({ suggestedName: zipName, types: [{ description: 'Zip', accept: { 'application/zip': ['.zip'] } }] });
        } catch (error) {
          if (error?.name === 'AbortError') return;
          throw error;
        }
        sink = fileSink(await handle.createWritable());
      } else {
        sink = blobSink();
      }
      const zip = new ZipWriter(sink);
      let done = 0;
      try {
        for (const member of members) {
          const path = member.folder ? `${member.folder}/${member.name}` : member.name;
          status.textContent = `Downloading and decrypting ${path}…`;
          const plain = await decrypt(member.url, member.size, secret, member.type, (bytes) => progress(done + bytes));
          done += member.size;
          await zip.add(path, plain, member.modified);
        }
        const blob = await zip.finish();
        if (blob) save(blob, zipName);
        status.textContent = `Decrypted ${members.length} file${members.length === 1 ? '' : 's'} into ${zipName}.`;
      } catch (error) {
        // Nothing half-made stays on disk; a blob sink is dropped with the page's reference to it.
        await sink.abort();
        throw error;
      }
    });
  });

  if (secret) {
    openWith(secret);
  } else {
    // No key in the link: a share encrypted with a passphrase, or a link cut short.
    form.hidden = false;
    passphrase.required = true;
    status.textContent = 'The link holds no key: give the passphrase, or open the whole link.';
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      openWith({ passphrase: passphrase.value });
    });
  }
}
