#!/usr/bin/env node
// Generates proto/src/generated with proto-loader-gen-types, using the same
// options the runtime loader passes to loadSync (proto/loader-options.json),
// so the committed types describe exactly the objects grpc-js hands us.
// It also writes descriptor-set.binpb: the real FileDescriptorProtos (real
// file names, real imports, comments) of fencing.v1 and of the google.rpc
// error details, built by buf, which server reflection serves so that any
// client can decode our status details.
// With --check it generates into a temporary folder and fails on any drift.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const protoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const committed = join(protoRoot, 'src', 'generated');
const options = JSON.parse(readFileSync(join(protoRoot, 'loader-options.json'), 'utf8'));
const check = process.argv.includes('--check');
const outDir = check ? mkdtempSync(join(tmpdir(), 'fencer-gen-')) : committed;

const flags = Object.entries(options).map(([name, value]) => (value === true ? `--${name}` : `--${name}=${value}`));
const require = createRequire(import.meta.url);
const bin = join(
  dirname(require.resolve('@grpc/proto-loader/package.json')),
  'build',
  'bin',
  'proto-loader-gen-types.js',
);
if (!check) rmSync(committed, { recursive: true, force: true });
let drift = [];
try {
  execFileSync(
    process.execPath,
    [
      bin,
      ...flags,
      '--grpcLib=@grpc/grpc-js',
      '--importFileExtension=.js',
      '--includeComments',
      '--includeDirs=.',
      `--outDir=${outDir}`,
      'fencing/v1/sink.proto',
      'fencing/v1/coordinator.proto',
    ],
    { stdio: 'inherit', cwd: protoRoot },
  ); // relative paths keep the generated comments machine-independent
  // Imports before the files that import them (google/protobuf/any.proto before sink.proto), as readers of a set expect.
  writeFileSync(join(outDir, 'descriptor-set.binpb'), Buffer.concat([errorDetailFiles(), fencingFiles()]));
  if (check) {
    const files = (dir) =>
      readdirSync(dir, { recursive: true })
        .map(String)
        .filter((f) => statSync(join(dir, f)).isFile())
        .sort();
    const want = files(outDir);
    const have = files(committed);
    drift = [...new Set([...want, ...have])].filter(
      (f) =>
        !want.includes(f) ||
        !have.includes(f) ||
        !readFileSync(join(outDir, f)).equals(readFileSync(join(committed, f))),
    );
  }
} finally {
  if (check) rmSync(outDir, { recursive: true, force: true });
}

if (check) {
  if (drift.length > 0) {
    console.error(`generated types drifted from the .proto files: ${drift.join(', ')}\nrun: npm run gen:types`);
    process.exit(1);
  }
  console.log(`generated types match the .proto files (${relative(process.cwd(), committed)})`);
}

/** A serialized FileDescriptorSet of fencing/v1/*.proto. Two sets concatenated are one set (repeated field). */
function fencingFiles() {
  // --path: only our own files, whatever else lies below proto/ (node_modules).
  // --exclude-imports: google/protobuf/any.proto (sink.proto's WriteRefusal)
  // comes once, with the error details' files, not twice.
  return buf([
    'build',
    protoRoot,
    '--path',
    join(protoRoot, 'fencing'),
    '--exclude-imports',
    '--as-file-descriptor-set',
    '-o',
    '-',
  ]);
}

/**
 * google/rpc/status.proto and error_details.proto with their imports, from
 * google-proto-files. The inline config keeps buf from treating them as part
 * of proto/'s own module (they sit in its node_modules).
 */
function errorDetailFiles() {
  const root = dirname(require.resolve('google-proto-files/package.json'));
  const paths = ['google/rpc/status.proto', 'google/rpc/error_details.proto'].flatMap((file) => [
    '--path',
    join(root, file),
  ]);
  return buf(['build', root, '--config', '{"version":"v1"}', ...paths, '--as-file-descriptor-set', '-o', '-']);
}

function buf(args) {
  return execFileSync(join(dirname(require.resolve('@bufbuild/buf/package.json')), 'bin', 'buf'), args, {
    cwd: protoRoot,
    maxBuffer: 16 << 20,
  });
}
