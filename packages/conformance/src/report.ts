// The kit's output: a table for people, JSON for scripts, JUnit XML for CI
// systems (one testcase per rule: a failure element for a failed rule, a
// skipped element for a skipped one).
import type { CheckResult } from './checks.js';

/** One line per rule: its id, status and title, with the evidence of a failure or the reason for a skip. */
export function table(results: readonly CheckResult[]): string {
  const width = Math.max(4, ...results.map((r) => r.rule.length));
  const lines = results.map(
    (r) =>
      `${r.rule.padEnd(width)}  ${r.status.padEnd(7)}  ${r.title}${r.detail ? `\n${' '.repeat(width + 11)}${r.detail}` : ''}`,
  );
  const count = (status: CheckResult['status']) => results.filter((r) => r.status === status).length;
  return [...lines, `${count('held')} held, ${count('failed')} failed, ${count('skipped')} skipped`].join('\n');
}

/** `[{rule, status, detail}]`. */
export function json(results: readonly CheckResult[]): string {
  return JSON.stringify(results.map(({ rule, status, detail }) => ({ rule, status, detail })));
}

const xml = (text: string) =>
  text.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!);

/** JUnit XML: one testsuite, one testcase per rule. */
export function junit(results: readonly CheckResult[]): string {
  const failures = results.filter((r) => r.status === 'failed').length;
  const skipped = results.filter((r) => r.status === 'skipped').length;
  const cases = results.map((r) => {
    const body =
      r.status === 'failed'
        ? `<failure message="${xml(r.detail)}"/>`
        : r.status === 'skipped'
          ? `<skipped message="${xml(r.detail)}"/>`
          : '';
    return `  <testcase classname="fencing.v1" name="${xml(`${r.rule}: ${r.title}`)}">${body}</testcase>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuite name="fencer conformance" tests="${results.length}" failures="${failures}" skipped="${skipped}">`,
    ...cases,
    '</testsuite>',
    '',
  ].join('\n');
}
