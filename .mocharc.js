// Tests run from the compiled output; `npm test` builds first. Files run in parallel processes
// (files that start proxies take turns: test/helpers/shared-network.ts); the ones that measure
// time against a bound run alone afterwards (.mocharc.solo.js), on a machine nothing else loads.
const os = require('node:os');

const SOLO = [
  'dist/test/e2e/reliability/**/*.test.js',
  'dist/test/e2e/security/root-rotation-end-to-end.test.js',
  'dist/test/modules/discovery/config-input-limits.test.js',
];

module.exports = {
  spec: 'dist/test/**/*.test.js',
  ignore: SOLO,
  require: 'dist/test/setup.js',
  timeout: 20000,
  recursive: true,
  parallel: true,
  jobs: Math.max(2, os.cpus().length),
  SOLO,
};
