// Tables people paste into a README as they are: `fencer bench`'s and `fencer trace --summary`'s.

/** A Markdown table with its columns padded, right-aligned where `right[i]`. */
export function markdownTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  right: readonly boolean[],
) {
  const widths = header.map((cell, i) => Math.max(cell.length, 3, ...rows.map((row) => row[i]!.length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell, i) => (right[i] ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join(' | ')} |`;
  const rule = `| ${widths.map((width, i) => (right[i] ? `${'-'.repeat(width - 1)}:` : '-'.repeat(width))).join(' | ')} |`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}
