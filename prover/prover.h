/* SPDX-License-Identifier: Apache-2.0 */
/* prover.h - public API of libprover */
#ifndef PROVER_H
#define PROVER_H
#endif
