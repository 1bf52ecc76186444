// blobdrop's browser code: one module for every page, no build step and no dependencies.
// Every page works without it; each feature below starts only if the page has its elements, and
// nothing here writes inline styles (the CSP forbids them): state shows through classes and `hidden`.

const UPLOADS_AT_ONCE = 2; // more only splits the same bandwidth and SQLite has one writer anyway
const SPEED_WINDOW_MS = 3000; // long enough to smooth bursts, short enough to follow a changing link
const STATS_EVERY_MS = 500;
const COPIED_FOR_MS = 3000;

const csrfToken = () => document.querySelector('meta[name="csrf-token"]')?.content ?? '';

// ---------------------------------------------------------------------------------------------
// Formatting

const SIZE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** Binary units, as the files page gives sizes: 1572864 -> "1.5 MiB". */
export function formatBytes(bytes) {
  let value = Math.max(0, bytes);
  let unit = 0;
  while (value >= 1024 && unit < SIZE_UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const digits = unit === 0 || value >= 100 ? 0 : 1;
  return `${value.toFixed(digits)} ${SIZE_UNITS[unit]}`;
}

export function formatSpeed(bytesPerSecond) {
  return `${formatBytes(bytesPerSecond)}/s`;
}

/** "4 s left", "2 min 5 s left", "1 h 3 min left": two units at most, as people read a clock. */
export function formatTimeLeft(seconds) {
  if (!Number.isFinite(seconds)) return '';
  const total = Math.max(1, Math.ceil(seconds));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const secs = total % 60;
  if (hours > 0) return minutes > 0 ? `${hours} h ${minutes} min left` : `${hours} h left`;
  if (minutes > 0) return secs > 0 ? `${minutes} min ${secs} s left` : `${minutes} min left`;
  return `${secs} s left`;
}

const pad = (n) => String(n).padStart(2, '0');

/** pasted-2024-05-01-134502.txt, in local time so it matches the clock the user sees. */
export function pastedName(extension, now = new Date()) {
  const day = `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`;
  const time = `${pad(now.getHours())}${pad(now.getMinutes())}${pad(now.getSeconds())}`;
  return `pasted-${day}-${time}.${extension}`;
}

const IMAGE_EXTENSIONS = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/gif': 'gif', 'image/webp': 'webp' };

/**
 * The server answers errors with one line of text; anything else (an HTML page from a proxy, an
 * empty body) is replaced by the status line so the list never shows markup.
 */
function failureReason(xhr) {
  // The server's 401 text speaks to curl users; here the cause is an ended session.
  if (xhr.status === 401) return 'signed out; sign in again and retry';
  const text = (xhr.responseText ?? '').trim();
  const line = text.split('\n', 1)[0].trim();
  if (line && !line.startsWith('<') && line.length <= 300) return line;
  if (xhr.status) return `${xhr.status} ${xhr.statusText}`.trim();
  return 'the connection was lost';
}

// ---------------------------------------------------------------------------------------------
// Copy links (upload page and files page)

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

function initCopyButtons() {
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

// ---------------------------------------------------------------------------------------------
// Confirmation before destructive forms (delete)

function initConfirmForms() {
  // Capture phase, so the question comes before any other submit handler could act.
  document.addEventListener(
    'submit',
    (event) => {
      const form = event.target;
      if (!(form instanceof HTMLFormElement) || !form.dataset.confirm) return;
      if (!window.confirm(form.dataset.confirm)) {
        event.preventDefault();
        event.stopImmediatePropagation();
      }
    },
    true,
  );
}

// ---------------------------------------------------------------------------------------------
// Small page-wide touches

/** Narrow screens show table rows as cards; each cell then needs its column name beside it. */
function labelTableCells() {
  for (const table of document.querySelectorAll('#files-table, #download-history')) {
    const headings = [...table.querySelectorAll('thead th')].map((th) => th.textContent.trim());
    for (const row of table.querySelectorAll('tbody tr')) {
      [...row.cells].forEach((cell, index) => {
        if (!cell.dataset.label && headings[index]) cell.dataset.label = headings[index];
      });
    }
  }
}

/** The server may already mark the current section; if not, the path says which one it is. */
function markCurrentNav() {
  const links = [...document.querySelectorAll('.site-header nav a[href^="/"]')];
  if (links.length === 0 || links.some((link) => link.hasAttribute('aria-current'))) return;
  const path = location.pathname;
  const current = links
    .filter((link) => {
      const href = link.getAttribute('href');
      return href === '/' ? path === '/' : path === href || path.startsWith(`${href}/`);
    })
    .sort((a, b) => b.getAttribute('href').length - a.getAttribute('href').length)[0];
  current?.setAttribute('aria-current', 'page');
}

// ---------------------------------------------------------------------------------------------
// Upload page

/** Reads the expiry choice once per batch, so a later change of the select cannot mix batches. */
function expiryHeaders(select, dateInput) {
  const choice = select?.value ?? 'never';
  if (/^\d+$/.test(choice)) return { 'Max-Days': choice };
  if (choice === 'custom') {
    const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(dateInput?.value ?? '');
    if (!match) return null;
    // The end of the chosen day where the user is, not midnight UTC, which may be the day before.
    const end = new Date(Number(match[1]), Number(match[2]) - 1, Number(match[3]), 23, 59, 59);
    return { 'Expires-At': end.toISOString() };
  }
  return {};
}

function isEditable(target) {
  return (
    target instanceof HTMLElement &&
    (target.isContentEditable || target.matches('textarea, input:not([type=button], [type=submit], [type=file])'))
  );
}

/**
 * One row of ul#uploads. The list is a polite live region, so what it says is rationed: the
 * numbers that change twice a second sit in an aria-live="off" part, and each row speaks through
 * one hidden sentence, at most at every quarter and when the upload ends.
 */
class UploadRow {
  constructor(list, file, before) {
    this.file = file;
    this.xhr = null;
    this.samples = [];
    this.lastStatsAt = 0;
    this.spokenQuarter = 0;

    this.li = element('li', { className: 'upload', dataset: { state: 'queued' } });
    const head = element('div', { className: 'upload-head' });
    this.name = element('span', { className: 'upload-name', textContent: file.name });
    const size = element('span', { className: 'upload-size', textContent: formatBytes(file.size) });
    head.append(this.name, size);

    this.progress = element('progress', { className: 'upload-progress', max: 100, value: 0 });
    this.progress.setAttribute('aria-label', `Upload of ${file.name}`);

    const stats = element('div', { className: 'upload-stats' });
    stats.setAttribute('aria-live', 'off');
    this.percent = element('span', { className: 'upload-percent', textContent: '0%' });
    this.speed = element('span', { className: 'upload-speed' });
    this.eta = element('span', { className: 'upload-eta' });
    this.status = element('span', { className: 'upload-status', textContent: 'Waiting' });
    this.cancel = element('button', { type: 'button', className: 'upload-cancel', textContent: 'Cancel' });
    this.cancel.setAttribute('aria-label', `Cancel upload of ${file.name}`);
    stats.append(this.percent, this.speed, this.eta, this.status, this.cancel);

    this.spoken = element('span', { className: 'upload-announcement visually-hidden' });
    this.result = element('div', { className: 'upload-result', hidden: true });
    this.li.append(head, this.progress, stats, this.spoken, this.result);
    list.insertBefore(this.li, before);
  }

  say(text) {
    this.spoken.textContent = `${this.file.name}: ${text}`;
  }

  setState(state, status) {
    this.li.dataset.state = state;
    this.status.textContent = status;
  }

  onProgress(loaded, total) {
    const now = performance.now();
    this.samples.push({ at: now, loaded });
    while (this.samples.length > 2 && now - this.samples[0].at > SPEED_WINDOW_MS) this.samples.shift();
    const percent = total > 0 ? Math.floor((loaded / total) * 100) : 0;
    this.progress.value = percent;
    const quarter = Math.floor(percent / 25);
    if (quarter > this.spokenQuarter && quarter < 4) {
      this.spokenQuarter = quarter;
      this.say(`${quarter * 25}% uploaded`);
    }
    if (now - this.lastStatsAt < STATS_EVERY_MS && loaded < total) return;
    this.lastStatsAt = now;
    this.percent.textContent = `${percent}%`;
    const first = this.samples[0];
    const elapsed = (now - first.at) / 1000;
    if (elapsed < 0.2) return;
    const speed = (loaded - first.loaded) / elapsed;
    this.speed.textContent = formatSpeed(speed);
    this.eta.textContent = loaded >= total ? '' : speed > 0 ? formatTimeLeft((total - loaded) / speed) : '';
  }

  finishProgress() {
    this.progress.value = 100;
    this.percent.textContent = '100%';
    this.eta.textContent = '';
    this.cancel.hidden = true;
  }

  /** `forOwner`: the file's QR code and details page, which only the owner may open. */
  done(file, noteProblem, forOwner = true) {
    this.finishProgress();
    const status = noteProblem ? `Done (note not saved: ${noteProblem})` : 'Done';
    this.setState('done', status);
    const link = element('a', { className: 'upload-link', href: file.url, textContent: file.url });
    const copy = element('button', { type: 'button', className: 'copy-link', textContent: 'Copy link' });
    copy.dataset.url = file.url;
    const actions = element('div', { className: 'upload-actions' });
    actions.append(copy);
    const text = element('div', { className: 'upload-result-text' });
    text.append(link, actions);
    this.result.append(text);
    if (forOwner) {
      const details = element('a', {
        className: 'upload-details',
        href: `/files/${encodeURIComponent(file.id)}`,
        textContent: 'Details',
      });
      details.setAttribute('aria-label', `Details of ${this.file.name}`);
      actions.append(details);
      const qr = element('img', {
        className: 'upload-qr',
        src: `/files/${encodeURIComponent(file.id)}/qr.svg`,
        alt: 'QR code of the link',
        width: 160,
        height: 160,
      });
      this.result.append(qr);
    }
    this.result.hidden = false;
    this.say(noteProblem ? `done, but the note was not saved: ${noteProblem}` : 'done');
  }

  failed(reason) {
    this.cancel.hidden = true;
    this.eta.textContent = '';
    this.speed.textContent = '';
    this.setState('failed', `Failed: ${reason}`);
    this.say(`failed: ${reason}`);
  }

  cancelled() {
    this.cancel.hidden = true;
    this.eta.textContent = '';
    this.speed.textContent = '';
    this.setState('cancelled', 'Cancelled');
    this.say('cancelled');
  }
}

function element(tag, props) {
  const node = document.createElement(tag);
  const { dataset, ...rest } = props;
  Object.assign(node, rest);
  if (dataset) Object.assign(node.dataset, dataset);
  return node;
}

/**
 * One PUT with XHR rather than fetch: fetch still cannot report upload progress. `uploadTo` is
 * `/` for the owner, `/g/{id}/` on a guest link's page.
 */
function sendFile(row, headers, uploadTo) {
  return new Promise((resolve) => {
    const xhr = new XMLHttpRequest();
    row.xhr = xhr;
    xhr.open('PUT', `${uploadTo}${encodeURIComponent(row.file.name)}`);
    xhr.setRequestHeader('Accept', 'application/json');
    xhr.setRequestHeader('X-CSRF-Token', csrfToken());
    for (const [name, value] of Object.entries(headers)) xhr.setRequestHeader(name, value);
    xhr.upload.addEventListener('progress', (event) => {
      if (event.lengthComputable) row.onProgress(event.loaded, event.total);
    });
    // The body is sent but the server still hashes and commits the last chunks.
    xhr.upload.addEventListener('load', () => {
      if (row.li.dataset.state === 'uploading') row.setState('saving', 'Saving');
    });
    xhr.addEventListener('load', () => {
      if (xhr.status === 201 || xhr.status === 200) {
        try {
          resolve({ ok: true, file: JSON.parse(xhr.responseText) });
        } catch {
          resolve({ ok: false, reason: 'the server answered something that is not JSON' });
        }
      } else {
        resolve({ ok: false, reason: failureReason(xhr) });
      }
    });
    xhr.addEventListener('error', () => resolve({ ok: false, reason: 'network error' }));
    xhr.addEventListener('abort', () => resolve({ ok: false, cancelled: true }));
    xhr.send(row.file);
  });
}

async function saveNote(id, note) {
  try {
    const response = await fetch(`/api/files/${encodeURIComponent(id)}`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrfToken(), Accept: 'application/json' },
      body: JSON.stringify({ note }),
      credentials: 'same-origin',
    });
    if (response.ok) return null;
    const text = (await response.text()).trim().split('\n', 1)[0];
    return text && !text.startsWith('<') ? text : `${response.status} ${response.statusText}`.trim();
  } catch {
    return 'network error';
  }
}

function initUploadPage() {
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
  const uploadTo = form.dataset.uploadTo ?? '/';
  const forOwner = form.dataset.guest === undefined;

  const queue = [];
  const running = new Set();

  const pump = () => {
    while (running.size < UPLOADS_AT_ONCE && queue.length > 0) {
      const job = queue.shift();
      running.add(job.row);
      run(job).finally(() => {
        running.delete(job.row);
        pump();
      });
    }
  };

  async function run({ row, headers, noteText }) {
    row.setState('uploading', 'Uploading');
    const answer = await sendFile(row, headers, uploadTo);
    if (answer.cancelled) return row.cancelled();
    if (!answer.ok) return row.failed(answer.reason);
    row.finishProgress();
    const noteProblem = noteText ? await saveNote(answer.file.id, noteText) : null;
    row.done(answer.file, noteProblem, forOwner);
  }

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
      const job = { row, headers, noteText };
      row.cancel.addEventListener('click', () => {
        const queued = queue.indexOf(job);
        if (queued >= 0) {
          queue.splice(queued, 1);
          row.cancelled();
        } else {
          row.xhr?.abort();
        }
      });
      queue.push(job);
    }
    pump();
  }

  // The form is a convenience for the picker: it must never navigate.
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (fileInput?.files) upload([...fileInput.files]);
  });

  if (fileInput) {
    fileInput.addEventListener('change', () => {
      upload([...fileInput.files]);
      // Cleared so that choosing the same file again is a change, and uploads it again.
      fileInput.value = '';
    });
  }

  if (fileInput && chooseButton) {
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

  if (dropZone && fileInput) {
    dropZone.addEventListener('click', (event) => {
      if (event.target instanceof Element && event.target.closest('button, a, input, label, select, textarea')) return;
      fileInput.click();
    });
  }

  if (expiry && expiryDate) {
    const dateField = expiryDate.closest('.field') ?? expiryDate.closest('label') ?? expiryDate;
    const dateLabel = document.querySelector('label[for="expiry-date"]');
    const today = new Date();
    expiryDate.min = `${today.getFullYear()}-${pad(today.getMonth() + 1)}-${pad(today.getDate())}`;
    const sync = () => {
      const custom = expiry.value === 'custom';
      dateField.hidden = !custom;
      if (dateLabel && !dateField.contains(dateLabel)) dateLabel.hidden = !custom;
      expiryDate.required = custom;
    };
    expiry.addEventListener('change', () => {
      sync();
      if (expiry.value === 'custom') expiryDate.focus();
    });
    expiryDate.addEventListener('input', () => expiryDate.setCustomValidity(''));
    sync();
  }

  // Drops anywhere count, not only on the hint: a big window is easier to hit than a box.
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
    );
  });

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

  window.addEventListener('beforeunload', (event) => {
    if (running.size > 0 || queue.length > 0) event.preventDefault();
  });
}

// Node imports this file to unit-test the formatters above; only a page has a document to set up.
if (typeof document !== 'undefined') {
  initConfirmForms();
  initCopyButtons();
  labelTableCells();
  markCurrentNav();
  initUploadPage();
}
