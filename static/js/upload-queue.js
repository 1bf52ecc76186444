// The queue of uploads: a few at a time, each row's Cancel button, and whether any is still under way.

import { saveNote, sendFile } from './upload-send.js';

const UPLOADS_AT_ONCE = 2; // more only splits the same bandwidth and SQLite has one writer anyway

export class UploadQueue {
  /** `uploadTo` and `forOwner` as sendFile and UploadRow.done take them. */
  constructor(uploadTo, forOwner) {
    this.uploadTo = uploadTo;
    this.forOwner = forOwner;
    this.waiting = [];
    this.running = new Set();
  }

  /** Leaving the page now would cut an upload short. */
  get busy() {
    return this.running.size > 0 || this.waiting.length > 0;
  }

  /**
   * Queues one file's row; its Cancel button takes it out of the queue or aborts its request.
   * Resolves with the uploaded file's JSON, or null if it failed or was cancelled.
   */
  add(row, headers, noteText) {
    let settle;
    const settled = new Promise((resolve) => {
      settle = resolve;
    });
    const job = { row, headers, noteText, settle };
    row.cancel.addEventListener('click', () => {
      const queued = this.waiting.indexOf(job);
      if (queued >= 0) {
        this.waiting.splice(queued, 1);
        row.cancelled();
        settle(null);
      } else {
        row.xhr?.abort();
      }
    });
    this.waiting.push(job);
    return settled;
  }

  /** Starts queued uploads while fewer than UPLOADS_AT_ONCE run. */
  pump() {
    while (this.running.size < UPLOADS_AT_ONCE && this.waiting.length > 0) {
      const job = this.waiting.shift();
      this.running.add(job.row);
      this.run(job).then(job.settle, () => job.settle(null)).finally(() => {
        this.running.delete(job.row);
        this.pump();
      });
    }
  }

  async run({ row, headers, noteText }) {
    row.setState('uploading', 'Uploading');
    const answer = await sendFile(row, headers, this.uploadTo, this.forOwner);
    if (answer.cancelled) {
      row.cancelled();
      return null;
    }
    if (!answer.ok) {
      row.failed(answer.reason);
      return null;
    }
    row.finishProgress();
    const noteProblem = noteText ? await saveNote(answer.file.id, noteText) : null;
    row.done(answer.file, noteProblem, this.forOwner);
    return answer.file;
  }
}
