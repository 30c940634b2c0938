/* The library the native test server needs; WL_NAME is set at build time ("native-v1", or the rebuilt "native-v2"). */
const char *wl_name(void) { return WL_NAME; }
