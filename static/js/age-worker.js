// A worker that seals a run of an age file's chunks, so that a file's chunks are sealed on
// every core the machine has rather than on the page's one thread (see `sealRun` in
// age-stream.js). It is handed the payload key, the run's first chunk number, whether the run ends
// the file, and the plaintext; it answers with the sealed chunks as one buffer, or with the
// reason it could not.

import { chacha20poly1305 } from '../vendor/age.js';
import { CHUNK, chunkNonce } from './age-stream.js';

const TAG = 16;

/** Seals plaintext chunks (each CHUNK bytes, the last maybe fewer) into one buffer. */
function seal(key, first, endsFile, input) {
  const count = Math.max(1, Math.ceil(input.length / CHUNK));
  const output = new Uint8Array(input.length + TAG * count);
  for (let n = 0; n < count; n += 1) {
    const plain = input.subarray(n * CHUNK, Math.min(input.length, (n + 1) * CHUNK));
    const nonce = chunkNonce(first + n, endsFile && n === count - 1);
    output.set(chacha20poly1305(key, nonce).encrypt(plain), n * (CHUNK + TAG));
  }
  return output;
}

self.onmessage = ({ data: { job, key, first, endsFile, bytes } }) => {
  try {
    const output = seal(key, first, endsFile, new Uint8Array(bytes));
    self.postMessage({ job, bytes: output.buffer }, [output.buffer]);
  } catch (error) {
    self.postMessage({ job, error: String(error?.message ?? error) });
  }
};
