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

  /** Queues one file's row; its Cancel button takes it out of the queue or aborts its request. */
  add(row, headers, noteText) {
    const job = { row, headers, noteText };
    row.cancel.addEventListener('click', () => {
      const queued = this.waiting.indexOf(job);
      if (queued >= 0) {
        this.waiting.splice(queued, 1);
        row.cancelled();
      } else {
        row.xhr?.abort();
      }
    });
    this.waiting.push(job);
  }

  /** Starts queued uploads while fewer than UPLOADS_AT_ONCE run. */
  pump() {
    while (this.running.size < UPLOADS_AT_ONCE && this.waiting.length > 0) {
      const job = this.waiting.shift();
      this.running.add(job.row);
      this.run(job).finally(() => {
        this.running.delete(job.row);
        this.pump();
      });
    }
  }

  async run({ row, headers, noteText }) {
    row.setState('uploading', 'Uploading');
    const answer = await sendFile(row, headers, this.uploadTo, this.forOwner);
    if (answer.cancelled) return row.cancelled();
    if (!answer.ok) return row.failed(answer.reason);
    row.finishProgress();
    const noteProblem = noteText ? await saveNote(answer.file.id, noteText) : null;
    row.done(answer.file, noteProblem, this.forOwner);
  }
}
