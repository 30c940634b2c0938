import base from './index.js';

const dep = { ...base, via: 'require.mjs' };

export default dep;

export { dep as 'module.exports' };
