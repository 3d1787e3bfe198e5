// The constant tables of the modified Bessel functions of real order, shared
// by the portable recipe (bessel_ik.cc) and the kernel that evaluates the
// same method in scalar code (src/kernels/special_bessel_ik.cc).
#pragma once

#include <array>

namespace pytensor_onnx::recipes::bessel {

// Taylor coefficients of 1/Gamma(1 + z) at z = 0 (mpmath, 21 digits): the
// odd ones (z^1, z^3, ...) and the even ones (z^0, z^2, ...). At |z| <= 1/2
// the terms left out are below 1e-21.
inline constexpr std::array<double, 12> kRecipGammaOdd = {
    0.577215664901532860607,   -0.042002635034095235529, -0.0421977345555443367482, 0.0072189432466630995424,
    -0.000215241674114950972816, -0.0000201348547807882386557, 0.00000113302723198169588237,
    6.11609510448141581786e-9,   -1.18127457048702014459e-9,   7.78226343990507125405e-12,
    5.10037028745447597902e-13,  -5.34812253942301798237e-15};
inline constexpr std::array<double, 12> kRecipGammaEven = {
    1.0,  -0.655878071520253881077, 0.166538611382291489502, -0.00962197152787697356211, -0.00116516759185906511211,
    0.000128050282388116186153,   -0.00000125049348214267065735, -2.05633841697760710345e-7,
    5.00200764446922293006e-9,    1.04342671169110051049e-10, -3.69680561864220570819e-12,
    -2.05832605356650678322e-14};
// sinh(e) / e = sum e^2k / (2k + 1)! for |e| < 1/2 (the terms left out are
// below 1e-20).
inline constexpr std::array<double, 9> kSinhOverX = {1.0,
                                                     1.0 / 6,
                                                     1.0 / 120,
                                                     1.0 / 5040,
                                                     1.0 / 362880,
                                                     1.0 / 39916800,
                                                     1.0 / 6227020800.0,
                                                     1.0 / 1307674368000.0,
                                                     1.0 / 355687428096000.0};

}  // namespace pytensor_onnx::recipes::bessel
