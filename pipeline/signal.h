// Signal, as the pipeline names it: one perception entering the pipeline. The type is
// reasoning's (reasoning/signal.h), which builds the model's request from it: the pipeline
// sits above reasoning and no header of reasoning's may include one of the pipeline's.
#pragma once

#include "reasoning/signal.h"

namespace warden::pipeline {
using reasoning::Signal;
}  // namespace warden::pipeline
