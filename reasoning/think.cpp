#include "reasoning/think.h"
