/* SPDX-License-Identifier: Apache-2.0 */
/* model_validate.c - placeholder until implemented */
#include "config.h"
#include "model/model_int.h"
