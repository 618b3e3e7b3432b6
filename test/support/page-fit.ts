/**
 * What does not fit, measured in the page with page.evaluate(MEASURE) by the browser suites (the
 * dashboard's roles-and-widths, the console's account page); a string: the tests compile without the DOM library.
 * `labels`: on phones every table cell has a data-label (the cards show "label: value").
 */
export const MEASURE = `(() => {
  const problems = [];
  const root = document.scrollingElement || document.documentElement;
  if (root.scrollWidth > window.innerWidth) problems.push('page is ' + root.scrollWidth + 'px wide in a ' + window.innerWidth + 'px window');
  // A phone's table head is moved off the page (the cards carry the labels).
  const hidden = (el) => !!el.closest('.visually-hidden, [hidden], caption') || (!!el.closest('thead') && getComputedStyle(el.closest('thead')).position === 'absolute');
  const name = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\\s+/).join('.') : '') + ' "' + (el.textContent || '').trim().slice(0, 40) + '"';
  for (const table of Array.from(document.querySelectorAll('table'))) {
    if (hidden(table)) continue;
    const box = table.parentElement;
    if (table.getBoundingClientRect().width > box.clientWidth + 1) problems.push('table ' + Math.round(table.getBoundingClientRect().width) + 'px in a ' + box.clientWidth + 'px box: ' + name(box));
    if (box.scrollWidth > box.clientWidth + 1) problems.push('table box scrolls ' + box.scrollWidth + 'px in ' + box.clientWidth + 'px: ' + name(box));
    for (const cell of Array.from(table.querySelectorAll('td, th'))) {
      if (hidden(cell)) continue;
      if (cell.scrollWidth > cell.clientWidth + 1) problems.push('cell content cut (' + cell.scrollWidth + 'px in ' + cell.clientWidth + 'px): ' + name(cell));
      const r = cell.getBoundingClientRect();
      const t = box.getBoundingClientRect();
      if (r.width > 0 && r.right > t.right + 1) problems.push('cell outside its table box: ' + name(cell));
      if (window.innerWidth <= 640 && table.closest(".table-wrap") && cell.tagName === "TD" && !cell.classList.contains("actions") && (cell.textContent || '').trim() && !cell.getAttribute('data-label')) problems.push('cell without a label on a phone: ' + name(cell));
    }
  }
  for (const card of Array.from(document.querySelectorAll('.card, .notice, nav, main, .table-wrap'))) {
    if (hidden(card)) continue;
    const box = card.getBoundingClientRect();
    for (const el of Array.from(card.querySelectorAll('*'))) {
      if (hidden(el) || el.closest('pre, .uplot')) continue;
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) continue;
      if (r.right > box.right + 1 || r.left < box.left - 1) problems.push('sticks out of ' + name(card).slice(0, 40) + ': ' + name(el));
    }
  }
  for (const el of Array.from(document.querySelectorAll('a, button, label, dd, .mono'))) {
    if (hidden(el) || el.closest('pre') || el.classList.contains('account-email')) continue;
    const style = getComputedStyle(el);
    if (style.overflowX !== 'visible' && el.scrollWidth > el.clientWidth + 1) problems.push('text cut: ' + name(el));
  }
  return Array.from(new Set(problems)).slice(0, 12);
})()`;
