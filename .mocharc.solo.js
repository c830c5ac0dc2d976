// The time-bound tests, run one after another once the parallel run is over (see .mocharc.js).
const { SOLO, spec, ignore, parallel, jobs, ...common } = require('./.mocharc.js');

module.exports = { ...common, spec: SOLO };
