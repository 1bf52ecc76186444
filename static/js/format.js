// Display formatting for the upload list: sizes, speeds, time left, names of pasted files (no imports, so Node can load it alone).

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

/** 2024-05-01 in local time, the form a date input takes. */
export function localDate(now = new Date()) {
  return `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`;
}

/** pasted-2024-05-01-134502.txt, in local time so it matches the clock the user sees. */
export function pastedName(extension, now = new Date()) {
  const time = `${pad(now.getHours())}${pad(now.getMinutes())}${pad(now.getSeconds())}`;
  return `pasted-${localDate(now)}-${time}.${extension}`;
}
