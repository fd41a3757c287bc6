// The docs show `fencer` command lines to copy; each flag they give a
// command must be one that command's --help lists, so that a renamed or
// removed flag cannot leave the README telling users to type it.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runFencer } from '@fencer/testkit';

const DOCS = [
  'README.md',
  'docs/CONFORMANCE.md',
  'docs/PROTOCOL.md',
  'chaos/README.md',
  'packages/client/README.md',
  'services/sink/README.md',
  'services/coordinator/README.md',
];

/** Every (command, flag) the docs write after `fencer COMMAND`, continuation lines joined. */
function documentedFlags(commands: readonly string[]): Map<string, Set<string>> {
  const flags = new Map<string, Set<string>>();
  for (const doc of DOCS) {
    const text = readFileSync(new URL(`../../${doc}`, import.meta.url), 'utf8').replaceAll('\\\n', ' ');
    for (const [, command, rest] of text.matchAll(/fencer ([a-z]+)([^`|\n]*)/g)) {
      if (!commands.includes(command!)) continue;
      for (const [flag] of rest!.matchAll(/(?<![\w-])--[a-z][a-z0-9-]*/g)) {
        if (!flags.has(command!)) flags.set(command!, new Set());
        flags.get(command!)!.add(flag);
      }
    }
  }
  return flags;
}

describe("the docs' fencer command lines", () => {
  it('give each command only flags its --help lists', async () => {
    const top = await runFencer(['--help']);
    const commands = [...top.stdout.split('Commands:')[1]!.matchAll(/^ {2}([a-z][a-z-]*)/gm)]
      .map(([, name]) => name!)
      .filter((name) => name !== 'help');
    const documented = documentedFlags(commands);
    expect(documented.size, 'the docs show command lines of several commands').toBeGreaterThan(5);
    const helps = await Promise.all([...documented.keys()].map((command) => runFencer([command, '--help'])));
    const unknown = [...documented].flatMap(([command, flags], i) =>
      [...flags].filter((flag) => !helps[i]!.stdout.includes(flag)).map((flag) => `fencer ${command} ${flag}`),
    );
    expect(unknown).toEqual([]);
  });
});
