// The CI drift check (`npm run check:types`) must fail whenever the committed
// generated types and the .proto files disagree, whichever side moved. Each
// case runs the real script on a copy of proto/ with one thing changed.
import { spawnSync } from 'node:child_process';
import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const protoRoot = fileURLToPath(new URL('..', import.meta.url));
const nodeModules = fileURLToPath(new URL('../../node_modules', import.meta.url));
// Not @fencer/testkit's tempDir: the testkit depends on this package.
const dir = mkdtempSync(join(tmpdir(), 'fencer-gen-check-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let copies = 0;
/** A copy of proto/ (sources only) that resolves packages from the repo's node_modules. */
function protoCopy(): string {
  const root = join(dir, `copy-${copies++}`);
  for (const part of ['fencing', 'scripts', 'loader-options.json', 'buf.yaml', 'src/generated']) {
    cpSync(join(protoRoot, part), join(root, part), { recursive: true });
  }
  // proto/'s own node_modules (google-proto-files, not hoisted) wins over the repo's, as in place.
  mkdirSync(join(root, 'node_modules'));
  for (const from of [nodeModules, join(protoRoot, 'node_modules')]) {
    if (!existsSync(from)) continue;
    for (const entry of readdirSync(from)) {
      rmSync(join(root, 'node_modules', entry), { force: true });
      symlinkSync(join(from, entry), join(root, 'node_modules', entry));
    }
  }
  return root;
}

function check(root: string): { status: number | null; stderr: string } {
  const run = spawnSync(process.execPath, [join(root, 'scripts', 'gen-types.mjs'), '--check'], {
    cwd: root,
    encoding: 'utf8',
  });
  return { status: run.status, stderr: run.stderr };
}

describe('gen-types --check', () => {
  it('passes on the committed types', () => {
    expect(check(protoCopy()).status).toBe(0);
  });

  it.each<[string, (root: string) => void, string]>([
    [
      'a generated file edited by hand',
      (root) => appendFileSync(join(root, 'src/generated/fencing/v1/Lease.ts'), '// edited\n'),
      'fencing/v1/Lease.ts',
    ],
    [
      'a generated file missing',
      (root) => rmSync(join(root, 'src/generated/fencing/v1/Lease.ts')),
      'fencing/v1/Lease.ts',
    ],
    [
      'a descriptor set served by reflection edited by hand',
      (root) => appendFileSync(join(root, 'src/generated/descriptor-set.binpb'), Buffer.from([0x0a, 0x00])),
      'descriptor-set.binpb',
    ],
    [
      'a stray file among the generated ones',
      (root) => writeFileSync(join(root, 'src/generated/stray.ts'), ''),
      'stray.ts',
    ],
    [
      'a .proto field added without regenerating',
      (root) => {
        const file = join(root, 'fencing/v1/sink.proto');
        writeFileSync(
          file,
          readFileSync(file, 'utf8').replace('string grant_id = 3;', 'string grant_id = 3;\n  string note = 99;'),
        );
      },
      'fencing/v1/AdvanceFenceRequest.ts',
    ],
    [
      'a loader option changed without regenerating',
      (root) => {
        const file = join(root, 'loader-options.json');
        writeFileSync(file, readFileSync(file, 'utf8').replace('"defaults": true', '"defaults": false'));
      },
      'fencing/v1/Lease.ts',
    ],
  ])('fails on %s, naming the file', (_what, change, named) => {
    const root = protoCopy();
    change(root);
    const result = check(root);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(named);
  });
});
