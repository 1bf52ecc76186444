// Downloading an age file and decrypting it in the page, chunk by chunk as it arrives: what an
// encrypted file's page (open-encrypted.js) and an encrypted share's page use. A cut download goes
// on from the byte it reached.

import { SEALED, headerLength, newOpener } from './age-stream.js';

/** Tries after a cut connection, with this many seconds between them, then it gives up. */
const RETRIES = 5;
/** Decrypted bytes are handed to the browser's blob store in batches this big. */
const BATCH = 16 * 1024 * 1024;
const sleep = (seconds) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

/** The server's one-line reason for a refusal (a 404, a used-up limit), else the status. */
export async function refusal(response) {
  const line = (await response.text().catch(() => '')).trim().split('\n', 1)[0];
  return line && !line.startsWith('<') && line.length <= 300 ? line : `the server answered ${response.status}`;
}

/**
 * The age file's bytes as they arrive, `size` of them in all. A connection that fails or ends
 * early is opened again with `Range` from the byte reached (`If-Range`: only if the file is the
 * same), up to RETRIES times. `progress(bytes)` is told how far it got.
 */
export async function* download(url, size, progress) {
  let reached = 0;
  let tries = 0;
  let etag = null;
  while (reached < size) {
    const headers = reached > 0 ? { Range: `bytes=${reached}-`, ...(etag && { 'If-Range': etag }) } : {};
    let response;
    try {
      response = await fetch(url, { headers, credentials: 'same-origin', cache: 'no-store' });
    } catch {
      tries += 1;
      if (tries > RETRIES) throw new Error('the download was cut off and could not go on; try again');
      await sleep(tries);
      continue;
    }
    if (response.status !== (reached > 0 ? 206 : 200)) throw new Error(await refusal(response));
    if (reached === 0 && Number(response.headers.get('Content-Length') ?? size) !== size) {
      throw new Error('the server sent something other than the file (has it a password? open its download link first)');
    }
    etag ??= response.headers.get('ETag');
    const reader = response.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        reached += value.length;
        progress(reached);
        yield value;
      }
    } catch {
      // Cut off: the loop opens it again from `reached`.
    } finally {
      reader.cancel().catch(() => {});
    }
    if (reached < size) {
      tries += 1;
      if (tries > RETRIES) throw new Error('the download was cut off and could not go on; try again');
      await sleep(tries);
    }
  }
}

/** Bytes as they arrive, taken back out in lengths of one's choosing, each copied once. */
class Arrived {
  parts = [];
  length = 0;

  push(bytes) {
    this.parts.push(bytes);
    this.length += bytes.length;
  }

  /** The first `count` bytes (at most all there are), as one array; they are taken out. */
  take(count) {
    const out = new Uint8Array(Math.min(count, this.length));
    let filled = 0;
    while (filled < out.length) {
      const part = this.parts[0];
      const used = Math.min(part.length, out.length - filled);
      out.set(part.subarray(0, used), filled);
      filled += used;
      if (used === part.length) this.parts.shift();
      else this.parts[0] = part.subarray(used);
    }
    this.length -= out.length;
    return out;
  }

  /** The first `count` bytes without taking them out. */
  peek(count) {
    const out = this.take(count);
    this.parts.unshift(out);
    this.length += out.length;
    return out;
  }
}

/** Sealed chunks handed to the workers at a time (4 MiB of ciphertext), and runs opened at once. */
const RUN_CHUNKS = 64;
const RUNS_AHEAD = 4;

/**
 * Downloads and decrypts the age file at `url`: the plaintext as a Blob of `type`. Runs of chunks
 * are opened in the workers (`openRun`) while the download goes on, and kept in order.
 */
export async function decrypt(url, size, secret, type, progress) {
  const arrived = new Arrived();
  let opener = null;
  let index = 0;
  let blob = new Blob([]);
  let batch = [];
  let batched = 0;
  const opening = [];
  const keep = async (ahead) => {
    while (opening.length > ahead) {
      const plaintext = await opening.shift();
      batch.push(plaintext);
      batched += plaintext.length;
      if (batched >= BATCH) {
        blob = new Blob([blob, ...batch]);
        batch = [];
        batched = 0;
      }
    }
  };
  const open = (count, bytes) => {
    const run = opener.openRun(index, arrived.take(bytes));
    run.catch(() => {}); // its reason is thrown where it is kept, in order
    opening.push(run);
    index += count;
  };
  try {
    for await (const piece of download(url, size, progress)) {
      arrived.push(piece);
      if (!opener) {
        const head = arrived.peek(arrived.length);
        const length = headerLength(head);
        if (length < 0 || head.length < length + 16) continue;
        opener = await newOpener(head, size, secret);
        arrived.take(opener.payloadStart);
      }
      // Every run leaves the last chunk, which may be short, to the end.
      while (index + RUN_CHUNKS < opener.count && arrived.length >= RUN_CHUNKS * SEALED) {
        open(RUN_CHUNKS, RUN_CHUNKS * SEALED);
        await keep(RUNS_AHEAD);
      }
    }
    if (!opener) throw new Error('the file ends inside its age header');
    open(opener.count - index, arrived.length);
    await keep(0);
  } finally {
    opening.length = 0;
  }
  return new Blob([blob, ...batch], { type });
}
