// A zip written file by file as the files come (an encrypted share's "Download all, decrypted"):
// stored entries (the files are what they are; compressing them here would cost more than it
// saves), each one's CRC-32 and sizes in a data descriptor after its bytes, ZIP64 records for a
// file, an offset or an archive past 4 GiB, names in UTF-8. Where it goes is a sink:
// `fileSink` (a file on disk, through showSaveFilePicker) or `blobSink` (the browser's blob store).

/** Sizes and offsets at or past this need ZIP64 fields; the 32-bit field then holds it as a marker. */
const ZIP32_LIMIT = 0xffffffff;
/** Entries past this need the ZIP64 end records. */
const ENTRIES_LIMIT = 0xffff;
/** Bytes a blob sink keeps in the page before it hands them to the blob store. */
const BATCH = 16 * 1024 * 1024;
/** Bit 3: sizes and CRC-32 in a data descriptor; bit 11: the name is UTF-8. */
const FLAGS = 0x0808;

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n += 1) {
    let c = n;
    for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** The CRC-32 (ISO-HDLC, as zip uses it) of `bytes` following on from `crc`, the CRC-32 of what came before. */
export function crc32(bytes, crc = 0) {
  let c = ~crc;
  for (let i = 0; i < bytes.length; i += 1) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}

/** MS-DOS time and date fields, local time as zip has it; before 1980 is 1980-01-01. */
function dosTime(when) {
  if (when.getFullYear() < 1980) return { time: 0, date: (1 << 5) | 1 };
  return {
    time: (when.getHours() << 11) | (when.getMinutes() << 5) | (when.getSeconds() >> 1),
    date: ((when.getFullYear() - 1980) << 9) | ((when.getMonth() + 1) << 5) | when.getDate(),
  };
}

/** A little-endian record of `length` bytes, written field by field. */
function record(length) {
  const view = new DataView(new ArrayBuffer(length));
  let at = 0;
  const put = {
    u16(value) {
      view.setUint16(at, value, true);
      at += 2;
      return put;
    },
    u32(value) {
      view.setUint32(at, value, true);
      at += 4;
      return put;
    },
    u64(value) {
      view.setBigUint64(at, BigInt(value), true);
      at += 8;
      return put;
    },
    bytes(value) {
      new Uint8Array(view.buffer, at, value.length).set(value);
      at += value.length;
      return put;
    },
    done: () => new Uint8Array(view.buffer),
  };
  return put;
}

export class ZipWriter {
  /**
   * `sink`: `{ write(bytes), close(), abort() }`, as `fileSink` and `blobSink` make. `forceZip64`
   * gives every entry and the end ZIP64 records, as a file past 4 GiB has them (for tests).
   */
  constructor(sink, { forceZip64 = false } = {}) {
    this.sink = sink;
    this.forceZip64 = forceZip64;
    this.offset = 0;
    this.entries = [];
  }

  async put(bytes) {
    await this.sink.write(bytes);
    this.offset += bytes.length;
  }

  /** `blob` as the entry `path` (folders joined with `/`), read once, as it streams. */
  async add(path, blob, modified = new Date()) {
    const name = new TextEncoder().encode(path);
    const size = blob.size;
    const zip64 = this.forceZip64 || size >= ZIP32_LIMIT;
    const offset = this.offset;
    const { time, date } = dosTime(modified);
    const local = record(30 + name.length + (zip64 ? 20 : 0))
      .u32(0x04034b50)
      .u16(zip64 ? 45 : 20)
      .u16(FLAGS)
      .u16(0)
      .u16(time)
      .u16(date)
      .u32(0)
      .u32(zip64 ? ZIP32_LIMIT : 0)
      .u32(zip64 ? ZIP32_LIMIT : 0)
      .u16(name.length)
      .u16(zip64 ? 20 : 0)
      .bytes(name);
    // The sizes are in the descriptor; the ZIP64 field says they are 64-bit there.
    if (zip64) local.u16(0x0001).u16(16).u64(0).u64(0);
    await this.put(local.done());
    let crc = 0;
    let length = 0;
    const reader = blob.stream().getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      crc = crc32(value, crc);
      length += value.length;
      await this.put(value);
    }
    if (length !== size) throw new Error(`${path} changed while it was written`);
    const descriptor = record(zip64 ? 24 : 16).u32(0x08074b50).u32(crc);
    if (zip64) descriptor.u64(size).u64(size);
    else descriptor.u32(size).u32(size);
    await this.put(descriptor.done());
    this.entries.push({ name, crc, size, offset, time, date, zip64 });
  }

  /** Writes the central directory and the end records, and closes the sink: what `close` gives. */
  async finish() {
    const start = this.offset;
    for (const entry of this.entries) {
      const bigSize = entry.zip64 || entry.size >= ZIP32_LIMIT;
      const bigOffset = this.forceZip64 || entry.offset >= ZIP32_LIMIT;
      const extra = (bigSize ? 16 : 0) + (bigOffset ? 8 : 0);
      const central = record(46 + entry.name.length + (extra ? 4 + extra : 0))
        .u32(0x02014b50)
        .u16(45)
        .u16(extra ? 45 : 20)
        .u16(FLAGS)
        .u16(0)
        .u16(entry.time)
        .u16(entry.date)
        .u32(entry.crc)
        .u32(bigSize ? ZIP32_LIMIT : entry.size)
        .u32(bigSize ? ZIP32_LIMIT : entry.size)
        .u16(entry.name.length)
        .u16(extra ? 4 + extra : 0)
        .u16(0)
        .u16(0)
        .u16(0)
        .u32(0)
        .u32(bigOffset ? ZIP32_LIMIT : entry.offset)
        .bytes(entry.name);
      // The ZIP64 field holds, in this order, only the fields whose 32-bit value is the marker.
      if (extra) {
        central.u16(0x0001).u16(extra);
        if (bigSize) central.u64(entry.size).u64(entry.size);
        if (bigOffset) central.u64(entry.offset);
      }
      await this.put(central.done());
    }
    const size = this.offset - start;
    const count = this.entries.length;
    const zip64 =
      this.forceZip64 || count >= ENTRIES_LIMIT || start >= ZIP32_LIMIT || size >= ZIP32_LIMIT || this.entries.some((e) => e.zip64);
    if (zip64) {
      const end64 = this.offset;
      const records = record(56 + 20)
        .u32(0x06064b50)
        .u64(44)
        .u16(45)
        .u16(45)
        .u32(0)
        .u32(0)
        .u64(count)
        .u64(count)
        .u64(size)
        .u64(start)
        .u32(0x07064b50)
        .u32(0)
        .u64(end64)
        .u32(1);
      await this.put(records.done());
    }
    const end = record(22)
      .u32(0x06054b50)
      .u16(0)
      .u16(0)
      .u16(zip64 ? ENTRIES_LIMIT : count)
      .u16(zip64 ? ENTRIES_LIMIT : count)
      .u32(zip64 ? ZIP32_LIMIT : size)
      .u32(zip64 ? ZIP32_LIMIT : start)
      .u16(0);
    await this.put(end.done());
    return this.sink.close();
  }
}

/** A sink onto a file on disk (a FileSystemWritableFileStream); nothing is left of it if aborted. */
export function fileSink(writable) {
  return {
    write: (bytes) => writable.write(bytes),
    close: async () => {
      await writable.close();
      return null;
    },
    abort: () => writable.abort().catch(() => {}),
  };
}

/** A sink that collects the zip in the browser's blob store: `close()` gives it as a Blob. */
export function blobSink() {
  let blob = new Blob([]);
  let batch = [];
  let batched = 0;
  return {
    async write(bytes) {
      batch.push(bytes);
      batched += bytes.length;
      if (batched >= BATCH) {
        blob = new Blob([blob, ...batch]);
        batch = [];
        batched = 0;
      }
    },
    async close() {
      return new Blob([blob, ...batch], { type: 'application/zip' });
    },
    async abort() {
      blob = new Blob([]);
      batch = [];
    },
  };
}
