// hostPortList: the parser behind `--coordinator a,b,c` (H7), each bad list
// refused with a message that names the entry at fault.
import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { hostPortList } from './cli-options.js';

describe('hostPortList (H7)', () => {
  it.each([
    ['127.0.0.1:7001', ['127.0.0.1:7001']],
    ['a:1,b:2,[::1]:3', ['a:1', 'b:2', '[::1]:3']],
    [' a:1 , b:2', ['a:1', 'b:2']],
  ])('reads %j', (value, expected) => {
    expect(hostPortList(value)).toEqual(expected);
  });

  it.each([
    ['', 'address 1 of "" is empty'],
    ['a:1,,b:2', 'address 2 of "a:1,,b:2" is empty'],
    ['a:1,', 'address 2 of "a:1," is empty'],
    ['a:1,b', 'address 2 of "a:1,b": expected HOST:PORT (port 0-65535), got "b"'],
    ['a:1,b:70000', 'address 2 of "a:1,b:70000": expected HOST:PORT (port 0-65535), got "b:70000"'],
    ['a:1,b:2,a:1', '"a:1" is listed twice in "a:1,b:2,a:1"'],
  ])('refuses %j, naming the entry', (value, message) => {
    expect(() => hostPortList(value)).toThrow(new InvalidArgumentError(message));
  });
});
