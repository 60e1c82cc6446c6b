//! C. What a sealed snapshot may claim.
