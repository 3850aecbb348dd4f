#include "server/cluster/cluster_backend.h"
