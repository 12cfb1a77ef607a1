/* placeholder so the cluster library is never empty; removed when the store lands */
const char *cu_cluster_version(void); const char *cu_cluster_version(void) { return "v1.32.0-cueue"; }
