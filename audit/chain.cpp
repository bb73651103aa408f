#include "audit/chain.h"
