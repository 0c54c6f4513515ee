import { DefaultLogger } from '@temporalio/worker';
import { MockActivityEnvironment } from '@temporalio/testing';
import { heartbeating } from '../../src/util/heartbeat';

test('heartbeating: an activity heartbeats when its work starts and every second while it runs', async () => {
  const env = new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR') });
  const beats: number[] = [];
  env.on('heartbeat', () => beats.push(Date.now()));
  // The interval's beat at one second is due before the work's end at 2.5 s, however late the timers run.
  const result = await env.run(() => heartbeating(() => new Promise((resolve) => setTimeout(() => resolve('done'), 2_500))));
  expect(result).toBe('done');
  expect(beats.length).toBeGreaterThanOrEqual(2);
  const after = beats.length;
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  expect(beats.length).toBe(after);
});

test('heartbeating: a failure of the work is the failure of the call, and the beats stop', async () => {
  const env = new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR') });
  let beats = 0;
  env.on('heartbeat', () => beats++);
  await expect(env.run(() => heartbeating(() => Promise.reject(new Error('store down'))))).rejects.toThrow('store down');
  const after = beats;
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  expect(beats).toBe(after);
});

test('heartbeating: called outside an activity (a unit test of the activity function), it runs the work alone', async () => {
  await expect(heartbeating(async () => 42)).resolves.toBe(42);
});
