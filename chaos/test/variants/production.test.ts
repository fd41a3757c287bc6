// The variants cannot be switched on by accident: `fencer` offers no flag,
// environment variable or subcommand for them, and no production package
// depends on @fencer/variants (dependency-cruiser keeps its imports to tests).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runFencer } from '@fencer/testkit';
import { VARIANTS } from '@fencer/variants';

const root = new URL('../../../', import.meta.url);
const manifest = (folder: string) =>
  JSON.parse(readFileSync(new URL(`${folder}/package.json`, root), 'utf8')) as Record<string, unknown>;

describe('no production configuration reaches a variant', () => {
  it.each([[['--help']], [['sink', '--help']], [['coordinator', '--help']]])(
    '`fencer %j` mentions no variant',
    async (args) => {
      const { code, stdout } = await runFencer(args);
      expect(code).toBe(0);
      expect(stdout).toContain('sink'); // the help really was printed
      for (const word of ['variant', 'broken', 'lenient', 'two-step', 'grant-first', ...Object.keys(VARIANTS)])
        expect(stdout.toLowerCase()).not.toContain(word);
    },
  );

  it('no package but the tests depends on @fencer/variants, which is private and puts nothing on a PATH', () => {
    const workspaces = manifest('.').workspaces as string[];
    expect(workspaces).toContain('chaos/variants');
    for (const folder of ['.', ...workspaces.filter((w) => w !== 'chaos/variants')]) {
      const pkg = manifest(folder);
      for (const field of ['dependencies', 'optionalDependencies', 'peerDependencies'])
        expect(Object.keys(pkg[field] ?? {}), `${folder} ${field}`).not.toContain('@fencer/variants');
    }
    const variants = manifest('chaos/variants');
    expect(variants.private).toBe(true);
    expect(variants.bin).toBeUndefined();
  });
});
