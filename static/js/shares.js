// Shares from the browser: one link for a batch of uploads (files or a folder), and "Share
// selected" on the files page. Both end in POST /api/shares with the files' ids and folders.

const csrfToken = () => document.querySelector('meta[name="csrf-token"]')?.content ?? '';

/**
 * The share made of `files` ([{ id, folder }]), or { error } with a one-line reason. `to`: the
 * owner's API, or a guest link's `/g/{id}/share` (links that make each batch one share).
 * `requireEncryption` (the owner's API only): the server takes only age files into the share.
 */
export async function createShare(name, files, to = '/api/shares', requireEncryption = false) {
  const body = requireEncryption ? { name, files, require_encryption: true } : { name, files };
  try {
    const response = await fetch(to, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrfToken(), Accept: 'application/json' },
      body: JSON.stringify(body),
      credentials: 'same-origin',
    });
    if (response.ok) return await response.json();
    const text = (await response.text()).trim().split('\n', 1)[0];
    return { error: text && !text.startsWith('<') ? text : `${response.status} ${response.statusText}`.trim() };
  } catch {
    return { error: 'network error' };
  }
}

/** `photos/2024/a.jpg` of a folder upload: the folder inside the share, without the top folder. */
export function folderOf(relativePath) {
  const parts = relativePath.split('/').filter(Boolean);
  return parts.slice(1, -1).join('/');
}

/** Every file under a dropped folder entry, each with its path from the folder's parent. */
export async function filesOfEntry(entry) {
  if (entry.isFile) {
    const file = await new Promise((resolve, reject) => entry.file(resolve, reject));
    return [{ file, path: entry.fullPath.replace(/^\//, '') }];
  }
  const reader = entry.createReader();
  const children = [];
  // readEntries answers in batches (100 in Chromium) until it answers none.
  for (;;) {
    const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
    if (batch.length === 0) break;
    children.push(...batch);
  }
  children.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const files = [];
  for (const child of children) files.push(...(await filesOfEntry(child)));
  return files;
}

/** The row at the top of the upload list that gives the share's link once every file is in. */
export function shareRow(list, name, before) {
  const li = document.createElement('li');
  li.className = 'share-row';
  li.dataset.state = 'uploading';
  const title = document.createElement('span');
  title.className = 'upload-name';
  title.textContent = `Share “${name}”`;
  const status = document.createElement('span');
  status.className = 'upload-status';
  status.textContent = 'Waiting for its files';
  li.append(title, status);
  list.insertBefore(li, before);
  return {
    done(share) {
      li.dataset.state = 'done';
      const link = document.createElement('a');
      link.className = 'share-link';
      link.href = share.url;
      link.textContent = share.url;
      status.textContent = 'One link for all: ';
      status.append(link);
    },
    failed(reason) {
      li.dataset.state = 'failed';
      status.textContent = `Failed: ${reason}`;
    },
  };
}

/** The files page: tick files, name the share, "Share selected" opens the new share's page. */
export function initShareSelected() {
  const form = document.getElementById('share-selected-form');
  if (!form) return;
  const boxes = [...document.querySelectorAll('input.select-file')];
  const button = document.getElementById('share-selected');
  const name = document.getElementById('share-selected-name');
  const problem = document.getElementById('share-selected-error');
  const encrypted = document.getElementById('share-selected-encrypted');
  // Without this script the boxes would do nothing: they and the form appear only with it.
  form.hidden = false;
  for (const box of boxes) box.closest('.select')?.removeAttribute('hidden');
  const update = () => {
    button.disabled = !boxes.some((box) => box.checked);
  };
  for (const box of boxes) box.addEventListener('change', update);
  update();
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const files = boxes.filter((box) => box.checked).map((box) => ({ id: box.value, folder: '' }));
    if (files.length === 0) return;
    button.disabled = true;
    const share = await createShare(name.value.trim() || 'Shared files', files, '/api/shares', encrypted?.checked);
    if (share.error) {
      problem.textContent = share.error;
      problem.hidden = false;
      update();
      return;
    }
    window.location.assign(share.url);
  });
}
