import base from './index.js';

export default { ...base, via: 'index.mjs' };
