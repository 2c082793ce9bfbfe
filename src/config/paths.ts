// Where the config lives: CRM_CONFIG_DIR, else the folder conf would choose for project
// `crm-cli` (env-paths' rules). Computed here without loading conf, and passed to conf as `cwd`,
// so the folder Ctx.configDir() reports and the one conf writes are the same by construction.
import os from 'node:os';
import path from 'node:path';

export const PROJECT_NAME = 'crm-cli';
export const CONFIG_FILE_NAME = 'config.json';
const SUFFIXED = `${PROJECT_NAME}-nodejs`;

export function configDirFor(
  env: Record<string, string | undefined>,
  platform: NodeJS.Platform = process.platform,
  home: string = os.homedir(),
): string {
  const override = env.CRM_CONFIG_DIR;
  if (override !== undefined && override !== '') return path.resolve(override);
  if (platform === 'darwin') return path.join(home, 'Library', 'Preferences', SUFFIXED);
  if (platform === 'win32') {
    const appData = env.APPDATA || path.join(home, 'AppData', 'Roaming');
    return path.join(appData, SUFFIXED, 'Config');
  }
  return path.join(env.XDG_CONFIG_HOME || path.join(home, '.config'), SUFFIXED);
}

export function configFileIn(dir: string): string {
  return path.join(dir, CONFIG_FILE_NAME);
}
