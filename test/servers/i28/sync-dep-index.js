'use strict';

module.exports = { kind: 'sync-dep' };
