import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  applySets,
  buildBody,
  parseJsonObject,
  parseParams,
  parseSet,
  readData,
} from '../../../src/commands/shared/body.js';
import { UsageError } from '../../../src/http/errors.js';
import { tempDir } from '../../helpers/temp.js';

describe('parseSet', () => {
  it.each([
    ['name=Acme', ['name', 'Acme']],
    ['name=', ['name', '']],
    ['note=a=b', ['note', 'a=b']],
    ['amount:=5', ['amount', 5]],
    ['active:=true', ['active', true]],
    ['tags:=["a","b"]', ['tags', ['a', 'b']]],
    ['meta:={"x":1}', ['meta', { x: 1 }]],
    ['owner:=null', ['owner', null]],
    ['zip=01234', ['zip', '01234']],
  ])('%s', (spec, expected) => {
    expect(parseSet(spec)).toEqual(expected);
  });

  it.each(['noequals', '=value', ':=5', 'amount:=five', 'x:={'])('refuses %s as a usage error', (spec) => {
    expect(() => parseSet(spec)).toThrow(UsageError);
  });

  it('names the field when the JSON is bad', () => {
    expect(() => parseSet('amount:=five')).toThrow(/amount:= expects JSON/);
  });
});

describe('applySets', () => {
  it('--set wins over --data and keeps the rest', () => {
    expect(applySets({ a: 1, b: 2 }, ['b=x', 'c:=3'])).toEqual({ a: 1, b: 'x', c: 3 });
  });
  it('later --set wins over earlier', () => {
    expect(applySets({}, ['a=1', 'a=2'])).toEqual({ a: '2' });
  });
});

describe('parseJsonObject', () => {
  it('accepts an object', () => expect(parseJsonObject('{"a":1}', '--data')).toEqual({ a: 1 }));
  it.each(['[1]', '"x"', '5', 'null'])('refuses %s (not an object)', (text) => {
    expect(() => parseJsonObject(text, '--data')).toThrow(/must be a JSON object/);
  });
  it('names the source of malformed JSON', () => {
    expect(() => parseJsonObject('{"a":', '--data file x.json')).toThrow(/--data file x.json is not valid JSON/);
  });
});

describe('readData', () => {
  const dir = tempDir('crm-body-');
  it('reads inline JSON, @file and stdin', async () => {
    const file = join(dir, 'b.json');
    writeFileSync(file, '{"from":"file"}');
    expect(await readData('{"from":"inline"}', Readable.from([]))).toEqual({ from: 'inline' });
    expect(await readData(`@${file}`, Readable.from([]))).toEqual({ from: 'file' });
    expect(await readData('-', Readable.from(['{"from":', '"stdin"}']))).toEqual({ from: 'stdin' });
    expect(await readData(undefined, Readable.from([]))).toEqual({});
  });
  it('a missing file is a usage error naming it', async () => {
    await expect(readData(`@${join(dir, 'nope.json')}`, Readable.from([]))).rejects.toThrow(
      /cannot read --data file .*nope.json: ENOENT/,
    );
  });
  it('buildBody merges --data and --set', async () => {
    expect(await buildBody({ data: '{"a":1,"b":1}', set: ['b:=2'] }, Readable.from([]))).toEqual({ a: 1, b: 2 });
  });
});

describe('parseParams', () => {
  it('parses key=value pairs', () => {
    expect(parseParams(['email=a@b.c', 'q=x=y'])).toEqual({ email: 'a@b.c', q: 'x=y' });
  });
  it.each([['nokey'], ['=v'], ['limit=5'], ['cursor=abc']])('refuses %s', (p) => {
    expect(() => parseParams([p])).toThrow(UsageError);
  });
});
