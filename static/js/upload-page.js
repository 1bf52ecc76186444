// The upload page (the owner's, and a guest link's): turns chosen, dropped or pasted files into queued rows.

import { expiryHeaders, initExpiryField } from './expiry.js';
import { formatBytes } from './format.js';
import { UploadQueue } from './upload-queue.js';
import { UploadRow } from './upload-row.js';
import { newIdentity } from './age-stream.js';
import { NAMES_FILE, namesFile, placeholderName } from './encrypted-share.js';
import { createShare, filesOfEntry, folderOf, shareRow } from './shares.js';
import { initDrops, initFolderPicker, initPaste, initPicker } from './upload-sources.js';

export function initUploadPage() {
  const form = document.getElementById('upload-form');
  const list = document.getElementById('uploads');
  if (!form || !list) return;
  const fileInput = document.getElementById('file-input');
  const chooseButton = document.getElementById('choose-files');
  const expiry = document.getElementById('expiry');
  const expiryDate = document.getElementById('expiry-date');
  const note = document.getElementById('note');
  const dropZone = document.getElementById('drop-zone');
  const folderInput = document.getElementById('folder-input');
  const chooseFolder = document.getElementById('choose-folder');
  const oneLink = document.getElementById('one-link');
  const shareName = document.getElementById('share-name');
  const encrypt = document.getElementById('encrypt');
  // Optional: the server may state its size limit as data-max-upload="BYTES" on the form.
  const maxUpload = /^\d+$/.test(form.dataset.maxUpload ?? '') ? Number(form.dataset.maxUpload) : null;
  // A guest link's page says where its files go; a guest gets links but no owner-only extras.
  const forOwner = form.dataset.guest === undefined;
  const queue = new UploadQueue(form.dataset.uploadTo ?? '/', forOwner);
  // A guest link that makes each batch of several files one share, and where it asks for it.
  const guestShares = !forOwner && form.dataset.shareBatches !== undefined;
  const sharesTo = forOwner ? '/api/shares' : `${form.dataset.uploadTo ?? '/'}share`;

  // `share`: null, or { name, folders } with each file's folder inside the share, in order.
  function upload(files, folders = [], share = null) {
    if (files.length === 0 && folders.length === 0) return;
    const headers = expiryHeaders(expiry, expiryDate);
    if (headers === null || (expiry?.value === 'custom' && !expiryDate?.checkValidity())) {
      // Nothing is queued: the files would otherwise expire at a date the user never gave.
      if (headers === null) expiryDate?.setCustomValidity('Choose the day the files expire, or another expiry.');
      expiryDate?.reportValidity();
      expiryDate?.focus();
      return;
    }
    // Newest batch on top, but each batch in the order the user chose its files.
    const before = list.firstChild;
    // A folder arrives as a File that fails to read halfway; say why instead of "network error".
    for (const folder of folders) new UploadRow(list, folder, before).failed('folders cannot be uploaded; zip the folder first');
    const noteText = note?.value.trim() ?? '';
    const encrypted = encrypt?.checked ?? false;
    if (!share && ((oneLink?.checked && files.length > 0) || (guestShares && files.length > 1))) {
      share = { name: shareName?.value.trim() || 'Shared files', folders: files.map(() => '') };
    }
    // An encrypted share: one identity for the batch, and the server learns no name, not even
    // the share's or a folder's; they travel in the share's names file (encrypted-share.js).
    const sealed = encrypted && share ? { identity: newIdentity(), title: share.name } : null;
    sealed?.identity.catch(() => {}); // each file's upload says so if it fails
    const shared = share ? shareRow(list, share.name, before) : null;
    const uploaded = [];
    files.forEach((file, index) => {
      const row = new UploadRow(list, file, before);
      row.encrypt = encrypted;
      if (sealed) Object.assign(row, { identity: sealed.identity, placeholder: placeholderName(index + 1) });
      if (maxUpload !== null && file.size > maxUpload) {
        // The server would read the whole body before refusing it: say so before sending a byte.
        row.failed(`larger than the ${formatBytes(maxUpload)} limit per file`);
        return;
      }
      const settled = queue.add(row, headers, noteText);
      if (share) uploaded.push(settled.then((done) => done && { id: done.id, folder: share.folders[index], index }));
    });
    queue.pump();
    if (shared) {
      // One link for all once every file is in; files that failed are left out.
      Promise.all(uploaded).then(async (done) => {
        let members = done.filter(Boolean);
        if (members.length === 0) return shared.failed('no file of it was uploaded');
        let fragment = '';
        if (sealed) {
          const names = await sendNames(sealed, members, files, share.folders, headers, before);
          if (!names) return shared.failed('the names of its files could not be uploaded');
          // Every file at the share's root: the folders are in the names file only.
          members = [...members.map(({ id }) => ({ id, folder: '' })), { id: names.id, folder: '' }];
          fragment = `#${await sealed.identity}`;
        } else {
          members = members.map(({ id, folder }) => ({ id, folder }));
        }
        // The owner's encrypted share takes only age files: the server refuses a plaintext one.
        const made = await createShare(sealed ? 'Encrypted files' : share.name, members, sharesTo, sealed && forOwner);
        return made.error ? shared.failed(made.error) : shared.done({ ...made, url: `${made.url}${fragment}` });
      });
    }
  }

  /**
   * The names file of an encrypted share (each uploaded file's real name, type and folder, by its
   * placeholder), encrypted to the batch's identity and uploaded as `NAMES_FILE` with the batch's
   * expiry: the uploaded file, or null.
   */
  function sendNames(sealed, members, files, folders, headers, before) {
    const entries = members.map(({ index }) => ({
      file: placeholderName(index + 1),
      name: files[index].name,
      type: files[index].type || 'application/octet-stream',
      folder: folders[index] ?? '',
      modified: files[index].lastModified,
    }));
    const row = new UploadRow(list, namesFile(sealed.title, entries), before);
    Object.assign(row, { encrypt: true, identity: sealed.identity, placeholder: NAMES_FILE });
    const settled = queue.add(row, headers, '');
    queue.pump();
    return settled;
  }

  /** A chosen folder's files (each with its `webkitRelativePath`) as one share named after it. */
  function uploadFolder(files) {
    if (files.length === 0) return;
    const top = files[0].webkitRelativePath.split('/')[0] || 'Shared files';
    upload(files, [], { name: top, folders: files.map((file) => folderOf(file.webkitRelativePath)) });
  }

  /** Dropped files and folders: the folders' files, paths kept, and the files as one share. */
  async function dropped(files, folderFiles, folderEntries) {
    if ((!forOwner && !guestShares) || folderEntries.length === 0 || folderEntries.length !== folderFiles.length) {
      return upload(files, folderFiles);
    }
    const inFolders = [];
    for (const entry of folderEntries) inFolders.push(...(await filesOfEntry(entry)));
    const alone = files.length === 0 && folderEntries.length === 1;
    // A folder dropped alone is the share's root; beside others it is a folder inside the share.
    const folders = inFolders.map(({ path }) =>
      alone ? folderOf(path) : path.split('/').slice(0, -1).join('/'),
    );
    const name = alone ? folderEntries[0].name : shareName?.value.trim() || 'Shared files';
    upload([...files, ...inFolders.map(({ file }) => file)], [], {
      name,
      folders: [...files.map(() => ''), ...folders],
    });
  }

  // The form is a convenience for the picker: it must never navigate.
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (fileInput?.files) upload([...fileInput.files]);
  });
  if (fileInput) initPicker(fileInput, chooseButton, dropZone, upload);
  if (folderInput && chooseFolder && forOwner) initFolderPicker(folderInput, chooseFolder, uploadFolder);
  if (expiry && expiryDate) initExpiryField(expiry, expiryDate);
  initDrops(dropZone, (files, folderFiles, folderEntries) => dropped(files, folderFiles, folderEntries));
  initPaste(upload);

  window.addEventListener('beforeunload', (event) => {
    if (queue.busy) event.preventDefault();
  });
}
