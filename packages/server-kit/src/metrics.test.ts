// serveMetrics as a scraper meets it: GET /metrics in Prometheus text, any
// number of endpoints over one process's life, a taken address as StartupError.
import { describe, expect, it } from 'vitest';
import { StartupError } from '@fencer/cli-kit';
import { registry, rpcCalls, rpcCallsOpen, serveMetrics } from './metrics.js';

describe('serveMetrics', () => {
  it('serves /metrics with the RPC and process metrics, and only /metrics', async () => {
    const endpoint = await serveMetrics('127.0.0.1:0');
    const response = await fetch(`http://${endpoint.address}/metrics`);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('# TYPE fencer_rpc_calls_total counter');
    expect(text).toContain('process_cpu_user_seconds_total');
    expect((await fetch(`http://${endpoint.address}/`)).status).toBe(404);
    await endpoint.close();
  });

  it('a second endpoint in the same process starts too (and may run beside the first)', async () => {
    const first = await serveMetrics('127.0.0.1:0');
    const second = await serveMetrics('127.0.0.1:0');
    expect((await fetch(`http://${second.address}/metrics`)).status).toBe(200);
    await Promise.all([first.close(), second.close()]);
  });

  it('a taken or malformed address is a StartupError', async () => {
    const first = await serveMetrics('127.0.0.1:0');
    await expect(serveMetrics(first.address)).rejects.toBeInstanceOf(StartupError);
    await expect(serveMetrics('nowhere')).rejects.toBeInstanceOf(StartupError);
    await first.close();
  });

  it('hot-path tallies reach the scrape: a counter by its increase, once; a gauge by its value, down too', async () => {
    const sample = async (series: string) =>
      (await registry.metrics()).split('\n').find((line) => line.startsWith(`${series} `));
    const calls = rpcCalls('tally-test', 'Probe', 'OK');
    const open = rpcCallsOpen('tally-test');
    calls.value += 3;
    open.value += 2;
    expect(await sample('fencer_rpc_calls_total{service="tally-test",method="Probe",code="OK"}')).toMatch(/ 3$/);
    expect(await sample('fencer_rpc_calls_open{service="tally-test"}')).toMatch(/ 2$/);
    calls.value += 2;
    open.value -= 2;
    // Collected twice: an increase is added to the counter once.
    await registry.metrics();
    expect(await sample('fencer_rpc_calls_total{service="tally-test",method="Probe",code="OK"}')).toMatch(/ 5$/);
    expect(await sample('fencer_rpc_calls_open{service="tally-test"}')).toMatch(/ 0$/);
    // The same labels are the same tally.
    expect(rpcCalls('tally-test', 'Probe', 'OK')).toBe(calls);
  });
});
