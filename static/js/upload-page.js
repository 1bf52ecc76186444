// The upload page (the owner's, and a guest link's): turns chosen, dropped or pasted files into queued rows.

import { expiryHeaders, initExpiryField } from './expiry.js';
import { formatBytes } from './format.js';
import { UploadQueue } from './upload-queue.js';
import { UploadRow } from './upload-row.js';
import { initDrops, initPaste, initPicker } from './upload-sources.js';

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
  // Optional: the server may state its size limit as data-max-upload="BYTES" on the form.
  const maxUpload = /^\d+$/.test(form.dataset.maxUpload ?? '') ? Number(form.dataset.maxUpload) : null;
  // A guest link's page says where its files go; a guest gets links but no owner-only extras.
  const queue = new UploadQueue(form.dataset.uploadTo ?? '/', form.dataset.guest === undefined);

  function upload(files, folders = []) {
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
    for (const file of files) {
      const row = new UploadRow(list, file, before);
      if (maxUpload !== null && file.size > maxUpload) {
        // The server would read the whole body before refusing it: say so before sending a byte.
        row.failed(`larger than the ${formatBytes(maxUpload)} limit per file`);
        continue;
      }
      queue.add(row, headers, noteText);
    }
    queue.pump();
  }

  // The form is a convenience for the picker: it must never navigate.
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (fileInput?.files) upload([...fileInput.files]);
  });
  if (fileInput) initPicker(fileInput, chooseButton, dropZone, upload);
  if (expiry && expiryDate) initExpiryField(expiry, expiryDate);
  initDrops(dropZone, upload);
  initPaste(upload);

  window.addEventListener('beforeunload', (event) => {
    if (queue.busy) event.preventDefault();
  });
}
