import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { configDirFor, configFileIn } from '../../../src/config/paths.js';

describe('configDirFor', () => {
  it('CRM_CONFIG_DIR wins, resolved', () => {
    expect(configDirFor({ CRM_CONFIG_DIR: '/tmp/x' }, 'linux', '/home/u')).toBe('/tmp/x');
    expect(configDirFor({ CRM_CONFIG_DIR: 'rel' }, 'linux', '/home/u')).toBe(path.resolve('rel'));
  });
  it('follows env-paths as conf does', () => {
    expect(configDirFor({}, 'linux', '/home/u')).toBe('/home/u/.config/crm-cli-nodejs');
    expect(configDirFor({ XDG_CONFIG_HOME: '/x' }, 'linux', '/home/u')).toBe('/x/crm-cli-nodejs');
    expect(configDirFor({ CRM_CONFIG_DIR: '' }, 'linux', '/home/u')).toBe('/home/u/.config/crm-cli-nodejs');
    expect(configDirFor({}, 'darwin', '/Users/u')).toBe('/Users/u/Library/Preferences/crm-cli-nodejs');
  });
  it('the file is config.json in it', () => {
    expect(configFileIn('/tmp/x')).toBe(path.join('/tmp/x', 'config.json'));
  });
});
