/** /console: static files with the right cache headers, deep links fall back to index.html. */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { consolePlugin } from '../../src/plugins/console.js';

describe('console serving', () => {
  let root: string;
  let app: FastifyInstance;
  before(async () => {
    root = mkdtempSync(path.join(os.tmpdir(), 'feegate-console-'));
    mkdirSync(path.join(root, 'assets'));
    writeFileSync(path.join(root, 'index.html'), '<!doctype html><title>console</title>');
    writeFileSync(path.join(root, 'assets', 'index-abc123.js'), 'console.log(1)');
    app = Fastify();
    await app.register(consolePlugin, { root });
    await app.ready();
  });
  after(async () => {
    await app.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('serves index.html at /console/ with no-cache', async () => {
    const response = await app.inject('/console/');
    assert.equal(response.statusCode, 200);
    assert.match(response.headers['content-type'] as string, /text\/html/);
    assert.equal(response.headers['cache-control'], 'no-cache');
    assert.match(response.body, /<title>console<\/title>/);
  });

  it('redirects /console to /console/', async () => {
    const response = await app.inject('/console');
    assert.equal(response.statusCode, 301);
    assert.equal(response.headers.location, '/console/');
  });

  it('serves hashed assets as immutable', async () => {
    const response = await app.inject('/console/assets/index-abc123.js');
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal(response.body, 'console.log(1)');
  });

  it('answers a deep link of the single-page app with index.html', async () => {
    const response = await app.inject('/console/merchants/5b1f0e4c-0000-4000-8000-000000000000');
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['cache-control'], 'no-cache');
    assert.match(response.body, /<title>console<\/title>/);
  });

  it('serves nothing outside /console', async () => {
    assert.equal((await app.inject('/index.html')).statusCode, 404);
    assert.equal(
      (await app.inject('/console/../package.json')).statusCode === 200 &&
        (await app.inject('/console/../package.json')).body.includes('"name"'),
      false,
    );
  });
});

describe('console not built', () => {
  it('registers no route and keeps the app starting', async () => {
    const app = Fastify();
    await app.register(consolePlugin, { root: path.join(os.tmpdir(), 'feegate-no-console-here') });
    await app.ready();
    assert.equal((await app.inject('/console/')).statusCode, 404);
    await app.close();
  });
});
