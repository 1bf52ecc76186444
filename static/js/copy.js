// The "Copy link" buttons (button.copy-link with data-url) on every page, and the clipboard fallback they need.

const COPIED_FOR_MS = 3000;

async function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch {
      // Denied permission or an unfocused document: the old way below still works in those cases.
    }
  }
  const buffer = document.createElement('textarea');
  buffer.value = text;
  buffer.readOnly = true;
  buffer.className = 'copy-buffer';
  buffer.setAttribute('aria-hidden', 'true');
  buffer.tabIndex = -1;
  document.body.append(buffer);
  const previousFocus = document.activeElement;
  buffer.select();
  let copied = false;
  try {
    copied = document.execCommand('copy');
  } catch {
    copied = false;
  }
  buffer.remove();
  // Selecting moved the focus into the buffer; give it back so keyboard users stay on the button.
  if (previousFocus instanceof HTMLElement) previousFocus.focus();
  return copied;
}

/** One listener on the document, so buttons added later (a finished upload's row) work too. */
export function initCopyButtons() {
  const timers = new WeakMap();
  document.addEventListener('click', async (event) => {
    const button = event.target instanceof Element ? event.target.closest('button.copy-link') : null;
    if (!button || !button.dataset.url) return;
    event.preventDefault();
    const label = button.dataset.label ?? button.textContent;
    button.dataset.label = label;
    const copied = await copyText(button.dataset.url);
    button.textContent = copied ? 'Copied' : 'Copy failed';
    button.classList.toggle('copied', copied);
    clearTimeout(timers.get(button));
    timers.set(
      button,
      setTimeout(() => {
        button.textContent = label;
        button.classList.remove('copied');
      }, COPIED_FOR_MS),
    );
  });
}
