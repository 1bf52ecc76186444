// One row of the upload list (ul#uploads): its progress, speed, time left, result links and what it says to screen readers.

import { formatBytes, formatSpeed, formatTimeLeft } from './format.js';

const SPEED_WINDOW_MS = 3000; // long enough to smooth bursts, short enough to follow a changing link
const STATS_EVERY_MS = 500;

function element(tag, props) {
  const node = document.createElement(tag);
  const { dataset, ...rest } = props;
  Object.assign(node, rest);
  if (dataset) Object.assign(node.dataset, dataset);
  return node;
}

/**
 * The list is a polite live region, so what a row says is rationed: the numbers that change twice
 * a second sit in an aria-live="off" part, and each row speaks through one hidden sentence, at most
 * at every quarter and when the upload ends.
 */
export class UploadRow {
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
    copy.setAttribute('aria-label', `Copy link to ${this.file.name}`);
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
