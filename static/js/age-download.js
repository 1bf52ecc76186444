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

function joined(a, b) {
  if (a.length === 0) return b;
  const both = new Uint8Array(a.length + b.length);
  both.set(a);
  both.set(b, a.length);
  return both;
}

/** Downloads and decrypts the age file at `url`: the plaintext as a Blob of `type`. */
export async function decrypt(url, size, secret, type, progress) {
  let buffer = new Uint8Array(0);
  let opener = null;
  let index = 0;
  let blob = new Blob([]);
  let batch = [];
  let batched = 0;
  const keep = (plaintext) => {
    batch.push(plaintext);
    batched += plaintext.length;
    if (batched >= BATCH) {
      blob = new Blob([blob, ...batch]);
      batch = [];
      batched = 0;
    }
  };
  for await (const piece of download(url, size, progress)) {
    buffer = joined(buffer, piece);
    if (!opener) {
      const length = headerLength(buffer);
      if (length < 0 || buffer.length < length + 16) continue;
      opener = await newOpener(buffer, size, secret);
      buffer = buffer.subarray(opener.payloadStart);
    }
    // Every chunk but the last is whole; the last is what is left at the end.
    while (index < opener.count - 1 && buffer.length >= SEALED) {
      keep(opener.open(index, buffer.subarray(0, SEALED)));
      index += 1;
      buffer = buffer.subarray(SEALED);
    }
  }
  if (!opener) throw new Error('the file ends inside its age header');
  keep(opener.open(index, buffer));
  return new Blob([blob, ...batch], { type });
}
