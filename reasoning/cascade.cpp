#include "reasoning/cascade.h"
