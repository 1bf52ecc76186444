// Column names on table cells, for narrow screens that show table rows as cards.

/** Each card's cell then needs its column name beside it (CSS shows data-label). */
export function labelTableCells() {
  for (const table of document.querySelectorAll('table.cards')) {
    const headings = [...table.querySelectorAll('thead th')].map((th) => th.textContent.trim());
    for (const row of table.querySelectorAll('tbody tr')) {
      [...row.cells].forEach((cell, index) => {
        if (!cell.dataset.label && headings[index]) cell.dataset.label = headings[index];
      });
    }
  }
}
