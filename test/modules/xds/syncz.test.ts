import { expect } from 'chai';
import { newWatchState } from '../../../src/modules/xds/connection';
import { syncStatus } from '../../../src/modules/xds/syncz';

describe('syncz: the sync status of one xDS type of a connection', () => {
  it('maps nonces and NACKs as the incumbent does', () => {
    expect(syncStatus(undefined)).to.equal('NOT_SENT');
    const watch = newWatchState(undefined);
    expect(syncStatus(watch)).to.equal('NOT_SENT');
    watch.nonceSent = 'a-1';
    expect(syncStatus(watch)).to.equal('STALE');
    watch.nonceAcked = 'a-1';
    expect(syncStatus(watch)).to.equal('SYNCED');
    watch.nonceSent = 'a-2';
    expect(syncStatus(watch)).to.equal('STALE');
    watch.rejected = 'bad';
    expect(syncStatus(watch)).to.equal('ERROR');
  });
});
