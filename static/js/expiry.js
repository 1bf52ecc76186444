// The upload page's expiry choice: the date field it shows for "On a date…" and the headers it sends.

import { localDate } from './format.js';

/** Reads the expiry choice once per batch, so a later change of the select cannot mix batches. */
export function expiryHeaders(select, dateInput) {
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

/** Shows the date field only while "On a date…" is chosen, and then requires a day from today on. */
export function initExpiryField(expiry, expiryDate) {
  const dateField = expiryDate.closest('.field') ?? expiryDate.closest('label') ?? expiryDate;
  const dateLabel = document.querySelector('label[for="expiry-date"]');
  expiryDate.min = localDate();
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
