/** MikroORM's configuration where its tools look for it: the service's own (src/db/config.ts), on DATABASE_URL. */
import { readSetting } from './src/config.js';
import { ormConfig } from './src/db/config.js';

export { ormConfig, type DbConnection } from './src/db/config.js';
export default ormConfig({ clientUrl: readSetting('DATABASE_URL') ?? 'postgres://postgres@127.0.0.1:5432/postgres' });
