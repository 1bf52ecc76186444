// Where the upload page's files come from: the picker, drops anywhere on the page, and the clipboard.

import { pastedName } from './format.js';

const IMAGE_EXTENSIONS = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/gif': 'gif', 'image/webp': 'webp' };

function isEditable(target) {
  return (
    target instanceof HTMLElement &&
    (target.isContentEditable || target.matches('textarea, input:not([type=button], [type=submit], [type=file])'))
  );
}

/** "Choose folder": every file under the chosen folder, with its path, as one share. */
export function initFolderPicker(folderInput, chooseButton, uploadFolder) {
  folderInput.addEventListener('change', () => {
    uploadFolder([...folderInput.files]);
    folderInput.value = '';
  });
  folderInput.classList.add('visually-hidden');
  folderInput.tabIndex = -1;
  chooseButton.hidden = false;
  chooseButton.addEventListener('click', (event) => {
    event.preventDefault();
    folderInput.click();
  });
}

/** The "Choose files" button stands in for the bare file input; a click on the drop zone opens it too. */
export function initPicker(fileInput, chooseButton, dropZone, upload) {
  fileInput.addEventListener('change', () => {
    upload([...fileInput.files]);
    // Cleared so that choosing the same file again is a change, and uploads it again.
    fileInput.value = '';
  });

  if (chooseButton) {
    // With the button working, the bare input would be a second, unlabelled-looking tab stop.
    fileInput.classList.add('visually-hidden');
    fileInput.tabIndex = -1;
    document.querySelector('label[for="file-input"]')?.classList.add('visually-hidden');
    chooseButton.hidden = false;
    chooseButton.addEventListener('click', (event) => {
      event.preventDefault();
      fileInput.click();
    });
  }

  if (dropZone) {
    dropZone.addEventListener('click', (event) => {
      if (event.target instanceof Element && event.target.closest('button, a, input, label, select, textarea')) return;
      fileInput.click();
    });
  }
}

/** Drops anywhere count, not only on the hint: a big window is easier to hit than a box. */
export function initDrops(dropZone, upload) {
  let dragDepth = 0;
  const hasFiles = (event) => [...(event.dataTransfer?.types ?? [])].includes('Files');
  const setDragging = (on) => {
    document.documentElement.classList.toggle('dragging', on);
    dropZone?.classList.toggle('drag-over', on);
  };
  document.addEventListener('dragenter', (event) => {
    if (!hasFiles(event)) return;
    event.preventDefault();
    dragDepth += 1;
    setDragging(true);
  });
  document.addEventListener('dragover', (event) => {
    if (!hasFiles(event)) return;
    // Without this the browser would open the dropped file in place of the page.
    event.preventDefault();
    if (event.dataTransfer) event.dataTransfer.dropEffect = 'copy';
  });
  document.addEventListener('dragleave', (event) => {
    if (!hasFiles(event)) return;
    dragDepth = Math.max(0, dragDepth - 1);
    if (dragDepth === 0) setDragging(false);
  });
  document.addEventListener('drop', (event) => {
    dragDepth = 0;
    setDragging(false);
    const files = [...(event.dataTransfer?.files ?? [])];
    if (files.length === 0) return;
    event.preventDefault();
    const entries = [...(event.dataTransfer?.items ?? [])]
      .filter((item) => item.kind === 'file')
      .map((item) => item.webkitGetAsEntry?.());
    // Items and files list the same things in the same order; entries tell folders apart.
    const isFolder = (index) => entries.length === files.length && entries[index]?.isDirectory === true;
    upload(
      files.filter((_, index) => !isFolder(index)),
      files.filter((_, index) => isFolder(index)),
      entries.filter((_, index) => isFolder(index)),
    );
  });
}

/** Pasted files and pasted text (outside the form's fields) become uploads. */
export function initPaste(upload) {
  document.addEventListener('paste', (event) => {
    const data = event.clipboardData;
    if (!data) return;
    const files = [...data.files];
    if (files.length > 0) {
      event.preventDefault();
      upload(
        files.map((file) => {
          const extension = IMAGE_EXTENSIONS[file.type];
          // Screenshots arrive as "image.png": give them a name that tells them apart.
          return extension ? new File([file], pastedName(extension), { type: file.type }) : file;
        }),
      );
      return;
    }
    // Text pasted into the note or the date is just typing, not an upload.
    if (isEditable(event.target)) return;
    const text = data.getData('text/plain');
    if (!text) return;
    event.preventDefault();
    upload([new File([text], pastedName('txt'), { type: 'text/plain' })]);
  });
}
