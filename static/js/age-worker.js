// A worker that seals or opens a run of an age file's chunks, so that a file's chunks are worked
// on by every core the machine has rather than by the page's one thread (see `inWorkers` in
// age-stream.js). It is handed what `runChunks` takes (the payload key, the run's first chunk
// number, whether the run ends the file, the bytes) and answers with the output as one buffer, or
// with the reason it could not (a chunk that does not open).

import { chacha20poly1305 } from '../vendor/age.js';
import { runChunks } from './age-stream.js';

self.onmessage = ({ data }) => {
  try {
    const output = runChunks(chacha20poly1305, data);
    self.postMessage({ job: data.job, bytes: output.buffer }, [output.buffer]);
  } catch (error) {
    self.postMessage({ job: data.job, error: String(error?.message ?? error) });
  }
};
