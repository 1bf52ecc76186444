// Thumbnails (the files grid, the share page): the server makes one the first time it is asked,
// and answers 404 for a file it cannot make one of (a file named .png that is no picture). Such an
// image then gives way to the file's kind, instead of a broken-image icon.

/** Error events do not bubble, so one listener in the capture phase sees every image's. */
export function initThumbnails() {
  document.addEventListener(
    'error',
    (event) => {
      const img = event.target;
      if (!(img instanceof HTMLImageElement) || !img.matches('img.thumbnail, .gallery .picture img')) return;
      const standIn = document.createElement('span');
      standIn.className = 'kind';
      standIn.textContent = 'No preview';
      img.replaceWith(standIn);
    },
    true,
  );
}
