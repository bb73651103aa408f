#include "pipeline/pipeline.h"
