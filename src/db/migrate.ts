import { type Kysely, type Migration, type MigrationProvider, Migrator } from 'kysely';
import type { Engine } from './engine.js';
import * as core from './migrations/0001-core.js';
import * as dashboard from './migrations/0002-dashboard.js';
import * as operator from './migrations/0003-operator.js';
import * as apiExtensions from './migrations/0004-api-extensions.js';
import * as deposits from './migrations/0005-deposits.js';
import * as live from './migrations/0007-live.js';
import * as webhooks from './migrations/0006-webhooks.js';
import * as wallet from './migrations/0008-wallet.js';
import * as depositWalks from './migrations/0009-deposit-walks.js';
import * as depositReturns from './migrations/0010-deposit-returns.js';
import * as walletInFlight from './migrations/0011-wallet-in-flight.js';
import * as fewerIndexWrites from './migrations/0012-fewer-index-writes.js';
import * as orderChartAmounts from './migrations/0015-order-chart-amounts.js';
import * as orderNumbers from './migrations/0013-order-numbers.js';
import * as journalEntryIds from './migrations/0014-journal-entry-ids.js';
import * as usdtDeposits from './migrations/0016-usdt-deposits.js';
import * as lowBalanceAlerts from './migrations/0017-low-balance-alerts.js';
import * as dailyRollups from './migrations/0018-daily-rollups.js';
import * as teams from './migrations/0019-teams.js';
import * as inviteRevocation from './migrations/0020-invite-revocation.js';
import * as notifications from './migrations/0021-notifications.js';
import * as selfService from './migrations/0022-self-service.js';
import * as operatorConsole from './migrations/0023-operator-console.js';
import * as pricePlans from './migrations/0024-price-plans.js';
import * as liveOperatorPause from './migrations/0025-live-operator-pause.js';

/** Migrations live in code (no files to locate at run time) and are applied in name order. */
function provider(engine: Engine): MigrationProvider {
  const withEngine = (m: { up(db: Kysely<any>, engine: Engine): Promise<void> }): Migration => ({
    up: (db) => m.up(db, engine),
  });
  return {
    getMigrations: async () => ({
      '0001-core': withEngine(core),
      '0002-dashboard': withEngine(dashboard),
      '0003-operator': withEngine(operator),
      '0004-api-extensions': withEngine(apiExtensions),
      '0005-deposits': withEngine(deposits),
      '0006-webhooks': withEngine(webhooks),
      '0007-live': withEngine(live),
      '0008-wallet': withEngine(wallet),
      '0009-deposit-walks': withEngine(depositWalks),
      '0010-deposit-returns': withEngine(depositReturns),
      '0011-wallet-in-flight': withEngine(walletInFlight),
      '0012-fewer-index-writes': withEngine(fewerIndexWrites),
      '0013-order-numbers': withEngine(orderNumbers),
      '0014-journal-entry-ids': withEngine(journalEntryIds),
      '0015-order-chart-amounts': withEngine(orderChartAmounts),
      '0016-usdt-deposits': withEngine(usdtDeposits),
      '0017-low-balance-alerts': withEngine(lowBalanceAlerts),
      '0018-daily-rollups': withEngine(dailyRollups),
      '0019-teams': withEngine(teams),
      '0020-invite-revocation': withEngine(inviteRevocation),
      '0021-notifications': withEngine(notifications),
      '0022-self-service': withEngine(selfService),
      '0023-operator-console': withEngine(operatorConsole),
      '0024-price-plans': withEngine(pricePlans),
      '0025-live-operator-pause': withEngine(liveOperatorPause),
    }),
  };
}

export class SchemaTooNewError extends Error {}

export async function migrateToLatest(db: Kysely<any>, engine: Engine): Promise<string[]> {
  const migrator = new Migrator({ db, provider: provider(engine) });
  const { error, results = [] } = await migrator.migrateToLatest();
  if (error instanceof Error && /previously executed migration .* is missing/.test(error.message)) {
    // Another node already ran a newer Starport against this database: running old code on a
    // newer schema could corrupt it, so refuse to start.
    throw new SchemaTooNewError(
      `the database schema is newer than this version of Starport knows (${error.message.replace(/^.*migration /, 'migration ')}); upgrade Starport before starting it`,
    );
  }
  if (error) throw error;
  return results.filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Applies the migrations up to and including `name` only (tests of a migration's backfill). */
export async function migrateUpTo(db: Kysely<any>, engine: Engine, name: string): Promise<void> {
  const { error } = await new Migrator({ db, provider: provider(engine) }).migrateTo(name);
  if (error) throw error;
}
