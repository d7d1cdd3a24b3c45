import root from '../../eslint.config.mjs';

// The e2e suites run against a real control plane from the test harness (@outrigger/control-plane,
// tagged type:testing). The root rules keep libraries off test tooling; that stays true for src/,
// and only the e2e folder may also use type:testing libs. The options are derived from the root
// rule so every other constraint stays as the workspace defines it.
const [level, options] = root.map((config) => config.rules?.['@nx/enforce-module-boundaries']).findLast(Boolean);
const e2eOptions = {
  ...options,
  depConstraints: options.depConstraints.map((constraint) =>
    constraint.sourceTag === 'type:lib'
      ? { ...constraint, onlyDependOnLibsWithTags: [...constraint.onlyDependOnLibsWithTags, 'type:testing'] }
      : constraint,
  ),
};

export default [
  // The root config applies TypeScript rules to .mjs files without their plugin; this file is config, not code.
  { ignores: ['eslint.config.mjs'] },
  ...root,
  { files: ['e2e/**/*.ts'], rules: { '@nx/enforce-module-boundaries': [level, e2eOptions] } },
];
